import COpenSSL

/// OpenSSL's process-wide state.
public enum CryptoLibrary {
    /// Initializes OpenSSL without its `atexit` clean-up. With it, `exit` frees OpenSSL's global
    /// locks while another thread may still be releasing a TLS context or key (a last reference
    /// dropped on a dispatch or resolver thread), and that thread then takes a freed lock: the
    /// process crashed with signal 11 after writing every file (seen once in ~100 SIGTERM runs).
    /// Without it, the operating system reclaims the memory at exit. Call it first in `main`,
    /// before anything else touches OpenSSL: its first initialization decides.
    public static func keepStateUntilExit() {
        _ = OPENSSL_init_crypto(UInt64(OPENSSL_INIT_NO_ATEXIT), nil)
    }
}
