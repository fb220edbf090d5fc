import Glibc

/// Threads for the transport: reactor loops and one-shot resolver threads. Plain pthreads, so a
/// reactor can be joined and named like any other thread in `top -H` or a debugger.
enum ReactorThread {
    private final class Start: Sendable {
        let name: String
        let body: @Sendable () -> Void
        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }

    /// Starts `body` on a new thread named `name` (truncated to the 15 bytes Linux keeps).
    /// A detached thread cleans up after itself; otherwise the caller must `join` it.
    static func spawn(name: String, detached: Bool,
                      _ body: @escaping @Sendable () -> Void) throws(SocketError) -> pthread_t {
        let start = Unmanaged.passRetained(Start(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { argument in
            guard let argument else { return nil }
            let start = Unmanaged<Start>.fromOpaque(argument).takeRetainedValue()
            CurrentThread.setName(start.name, fallback: "reactor")
            start.body()
            return nil
        }, start)
        guard status == 0 else {
            Unmanaged<Start>.fromOpaque(start).release()
            throw SocketError.system(call: "pthread_create", errno: status)
        }
        if detached { pthread_detach(thread) }
        return thread
    }

    static func join(_ thread: pthread_t) {
        pthread_join(thread, nil)
    }

    static var currentID: UInt { UInt(pthread_self()) }
}
