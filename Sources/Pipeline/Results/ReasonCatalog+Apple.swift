import APNs

extension ReasonCatalog {
    /// Meaning and action of each APNs reason (docs/apns.md). An exhaustive switch: a new `Reason`
    /// case does not compile until it has its two sentences.
    static func apple(_ reason: Reason) -> (meaning: String, action: String) {
        switch reason {
        case .badCollapseId:
            ("The `collapse_id` is over 64 bytes.", "Shorten the row's `collapse_id` (or `--collapse-id`) and send the row again.")
        case .badExpirationDate:
            ("The expiration is not a valid UNIX time, or, on a broadcast, is not 0 for a channel that stores no message.", "Fix the row's `expiration` (or `--expiration`): seconds since 1970, or 0 (always 0 for a no-storage channel).")
        case .badMessageId:
            ("The `apns_id` (on a broadcast, the `apns_request_id`) is not a UUID in its canonical form.", "Fix the row's `apns_id` (`apns_request_id`) or leave it empty for APNs to assign one.")
        case .badPriority:
            ("The priority is not 10, 5 or 1.", "Fix the row's `priority` (or `--priority`).")
        case .badTopic:
            ("The topic is invalid, or lacks the suffix its push type needs (`.voip`, `.complication`, ...).", "Fix the `topic` (or `--topic`) for the app and push type.")
        case .duplicateHeaders:
            ("A header was repeated in the request.", "Report it: apns-bulk should never send one; the row can be sent again.")
        case .invalidPushType:
            ("The push type is not one APNs knows.", "Fix the row's `push_type` (or `--push-type`).")
        case .missingDeviceToken:
            ("The request named no device token.", "Fill the row's `device_token`.")
        case .missingTopic:
            ("No topic was given where APNs needs one (token auth, or a certificate for several topics).", "Give `--topic` or a `topic` column.")
        case .payloadEmpty:
            ("The payload was empty.", "Give the row a `payload`, or a `--payload-file` or `--payload-template` for empty ones.")
        case .topicDisallowed:
            ("Sending to this topic is not allowed for these credentials (on a broadcast: the bundle id carries a push-type suffix).", "Check that the topic is the app's bundle id and that the key or certificate may send to it; a broadcast names the bare bundle id.")
        case .idleTimeout:
            ("APNs closed the connection for being idle.", "Nothing to do: apns-bulk reconnects; a row recorded with it can be sent again.")
        case .invalidPayload:
            ("The payload is not a JSON object, so apns-bulk refused it before sending.", "Fix the row's `payload` to a JSON object (`{\"aps\":{...}}`).")
        case .featureNotEnabled:
            ("The app's broadcast capability (Live Activity channels) is not enabled.", "Enable the Broadcast capability for the app's App ID in the Apple Developer account, then send again.")
        case .missingChannelId:
            ("The request named no channel (`apns-channel-id`).", "Fill the row's `channel_id` (or give `--channel-id`).")
        case .badChannelId:
            ("The channel id is not a valid base64 channel id.", "Use the channel id exactly as APNs returned it (`channels create`, `channels list`).")
        case .channelNotRegistered:
            ("The channel does not exist for this app in this environment: never created, or deleted.", "Remove the channel from the app's backend (dead-channels.csv lists it), or check `--environment`.")
        case .badRequestParams:
            ("A channel management request's parameters were refused.", "Check `--bundle-id` and `--channel-id`; if they are right, report it.")
        case .badRequestPayload:
            ("A channel management request's body was not the JSON APNs expects.", "Check `--storage-policy`; if it is right, report it: apns-bulk builds the body.")
        case .missingPushType:
            ("The request had no `apns-push-type` header, which broadcasts require.", "Report it: apns-bulk always sends `liveactivity` on a broadcast.")
        case .cannotCreateChannelConfig:
            ("The app has as many channels as APNs allows in this environment (10,000).", "Delete channels no longer used (`channels delete`), then create again.")
        case .badDeviceToken:
            ("The device token is malformed, or belongs to the other environment (sandbox vs production).", "Remove the token from the list (dead-tokens.csv), or check `--endpoint` if many rows have it.")
        case .deviceTokenNotForTopic:
            ("The device token does not belong to this topic's app.", "Remove the token from this app's list (dead-tokens.csv).")
        case .expiredProviderToken:
            ("The provider token is older than an hour by APNs' clock.", "Nothing when rare (apns-bulk renews it); if it stops a run, fix this machine's clock (NTP).")
        case .invalidProviderToken:
            ("The provider token's signature or claims were refused.", "Check `--key-file`, `--key-id` and `--team-id`, then `--resume`.")
        case .missingProviderToken:
            ("No provider token came and no client certificate authenticates the connection.", "Give `--key-file`/`--key-id`/`--team-id` or a client certificate, then `--resume`.")
        case .badCertificate:
            ("The client certificate was refused.", "Give a valid push certificate (`--cert-file`/`--p12-file`), then `--resume`.")
        case .badCertificateEnvironment:
            ("The client certificate is for the other environment.", "Use the certificate for this `--endpoint`, or the other endpoint, then `--resume`.")
        case .forbidden:
            ("APNs refused the request for these credentials.", "Check the credentials' permissions for this topic, then `--resume`.")
        case .unrelatedKeyIdInToken:
            ("The key id in the provider token does not belong to the team.", "Check `--key-id` and `--team-id`, then `--resume`.")
        case .badEnvironmentKeyIdInToken:
            ("The key in the provider token is not valid for this environment (APNs also spells it BadEnvironmentKeyInToken).", "Check `--key-id` and `--endpoint`, then `--resume`.")
        case .topicMismatch:
            ("The credentials do not serve the app the request names (its bundle id, letter case included).", "Check `--bundle-id` against the app's bundle id and the key's or certificate's apps.")
        case .badPath:
            ("The request path was wrong.", "Report it: apns-bulk builds the path from the token; the row can be sent again.")
        case .methodNotAllowed:
            ("The request method was not POST.", "Report it: apns-bulk always posts; the row can be sent again.")
        case .unregistered:
            ("The device token is no longer active for the topic (the app was removed or notifications turned off).", "Stop sending to it: remove the token (dead-tokens.csv lists it with `unregistered_at`).")
        case .expiredToken:
            ("The device token has expired.", "Stop sending to it: remove the token (dead-tokens.csv).")
        case .payloadTooLarge:
            ("The payload is over the size limit of its push type (4 KiB, 5 KiB for VoIP and broadcasts).", "Shorten the row's payload.")
        case .tooManyRequests:
            ("Too many notifications went to this device token in a short time.", "Nothing when rare (apns-bulk retries); if rows give up with it, send fewer notifications to those devices.")
        case .tooManyProviderTokenUpdates:
            ("The provider token was renewed too often.", "Nothing when rare (apns-bulk retries with the same token); if frequent, check that no other sender shares the key.")
        case .internalServerError:
            ("APNs had an internal error.", "Nothing when rare (apns-bulk retries); send `gave_up` rows again later.")
        case .serviceUnavailable:
            ("APNs was unavailable.", "Nothing when rare (apns-bulk retries elsewhere); send `gave_up` rows again later.")
        case .shutdown:
            ("The APNs server was shutting down.", "Nothing: apns-bulk retries on another connection.")
        }
    }
}
