import APNs

extension ReasonCatalog {
    /// Meaning and action of each binary provider API status (`--protocol binary`). An
    /// exhaustive switch: a new `LegacyStatus` case does not compile until it has its sentences.
    static func legacy(_ status: LegacyStatus) -> (meaning: String, action: String) {
        switch status {
        case .noErrors:
            ("Binary status 0: the gateway reported no error.", "Nothing to do.")
        case .processingError:
            ("Binary status 1: the gateway could not process the notification.", "Nothing when rare (apns-bulk retries); send `gave_up` rows again later.")
        case .missingDeviceToken:
            ("Binary status 2: the frame had no device token.", "Fill the row's `device_token`.")
        case .missingTopic:
            ("Binary status 3: the frame had no topic.", "Report it: the binary API takes the topic from the certificate.")
        case .missingPayload:
            ("Binary status 4: the frame had no payload.", "Give the row a `payload`.")
        case .invalidTokenSize:
            ("Binary status 5: the device token is not 32 bytes.", "Fix or remove the token: the binary API takes only 64-hex-digit tokens.")
        case .invalidTopicSize:
            ("Binary status 6: the topic's size was refused.", "Check the certificate's topic.")
        case .invalidPayloadSize:
            ("Binary status 7: the payload is over the binary API's 2 KiB.", "Shorten the payload, or send with `--protocol http2` (4 KiB).")
        case .invalidToken:
            ("Binary status 8: the device token is not valid for this certificate's app or environment.", "Remove the token (dead-tokens.csv), or check the endpoint if many rows have it.")
        case .shutdown:
            ("Binary status 10: the gateway was shutting down.", "Nothing: apns-bulk reconnects and sends the rows after it again.")
        case .protocolError:
            ("Binary status 128: the gateway could not read the frame.", "Report it: apns-bulk's frame was wrong; the row can be sent again.")
        case .unknown:
            ("Binary status 255 (or a status byte the API does not define): an unknown gateway error.", "Nothing when rare (apns-bulk retries); send `gave_up` rows again later.")
        }
    }
}
