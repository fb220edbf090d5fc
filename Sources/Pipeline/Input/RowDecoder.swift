import APNs

/// Turns a CSV row into a job to send, or into the reason it is `rejected`: what is wrong with the
/// row. A bad row never stops the run.
///
/// Checks run in APNs' order (device token, headers, payload), but what is the same for every row
/// is checked once: the run-level header values and the `--payload-file` payload. A row pays only
/// for its token, its own payload (one JSON scan) and any header columns of its own; a
/// `liveactivity` row also for ActivityKit's rules (`LiveActivityPayload`, read in that same scan),
/// which rows of other push types never pay.
struct RowDecoder: Sendable {
    let defaults: HeaderValues
    let auth: AuthKind
    private let defaultPayload: ArraySlice<UInt8>
    /// The run's header values, checked once, for every row without header columns of its own
    /// (its job says `headers: nil`); nil when they are invalid, `runRejection` saying why.
    let runDefaultHeaders: RowHeaders?
    private let runRejection: Rejection?
    /// `runDefaultHeaders`' push type, read per row without touching the shared object.
    private let runPushType: PushType
    /// The default payload's verdict under the run's push type.
    private let defaultPayloadRejection: Rejection?
    /// The Live Activity rule the default payload breaks, for the rows whose push type is
    /// `liveactivity` (the run's or their own); read once.
    private let defaultPayloadLiveActivityRule: LiveActivityPayload.Rule?
    /// `--payload-template`, for rows with an empty or absent `payload` field.
    private let template: BoundPayloadTemplate?
    /// Spent jobs on their way from the workers back to the reader, for new rows (`JobPool`).
    let jobPool = JobPool()
    /// A broadcast campaign's rules for its rows (`apns-bulk broadcast`), which take every row; nil for device pushes.
    private let broadcast: BroadcastRowDecoder?
    /// `broadcast` (which keeps it), reached per row without a retain and release around the call.
    private let broadcastRef: Unmanaged<BroadcastRowDecoder>?

    init(defaults: HeaderValues, defaultPayload: [UInt8]?, auth: AuthKind, template: BoundPayloadTemplate? = nil,
         broadcast: BroadcastRowDecoder? = nil) {
        self.broadcast = broadcast
        broadcastRef = broadcast.map { Unmanaged.passUnretained($0) }
        self.defaults = defaults
        self.template = template
        self.auth = auth
        self.defaultPayload = (defaultPayload ?? [])[...]
        defaultPayloadLiveActivityRule = defaultPayload.flatMap { payload in
            JSONValidator.isJSONObject(payload) ? LiveActivityPayload(json: payload).brokenRule(route: .deviceToken) : nil
        }
        do {
            let headers = if let broadcast { broadcast.runHeaders }
                else { RowHeaders(try NotificationHeaders(parsing: defaults, auth: auth)) }
            runDefaultHeaders = headers
            runRejection = nil
            runPushType = headers.pushType
            defaultPayloadRejection = headers.values.payloadRejection(self.defaultPayload)
        } catch {
            runDefaultHeaders = nil
            runRejection = error
            runPushType = .alert
            defaultPayloadRejection = nil
        }
    }

    /// The run's payload (`--payload-file`; empty without one), for the jobs whose payload is the
    /// run's (`Job.payload(runPayload:)`).
    var runPayload: ArraySlice<UInt8> { defaultPayload }

    /// A row's verdict. A rejection carries only its reason: the caller, which has the row, builds
    /// the record. A `RowResult` payload would make the enum many words wide, and every row,
    /// `.send` ones included, would pay for returning and destroying it.
    enum Decoded {
        case send(Job)
        case rejected(reason: String)
        /// Rejected `InvalidPayload`: a `liveactivity` row whose payload breaks this ActivityKit rule,
        /// which the reader names on stderr (the first row of each rule).
        case breaksLiveActivityRule(LiveActivityPayload.Rule)
    }

    private static let headerColumns: [CSVColumn] = [.topic, .pushType, .priority, .expiration, .collapseID, .apnsID]

    /// Row `index` of `batch`, read from the batch in place: the row pays a retain of the storage
    /// only for the slices its job keeps (token, payload).
    /// `spares`: where a usual row's job comes from when one is spent (`JobPool`), else a new one.
    func decode(_ batch: borrowing CSVBatch, at index: Int, memo: RowHeadersMemo? = nil, spares: JobSpares? = nil) -> Decoded {
        if let broadcastRef { return broadcastRef._withUnsafeGuaranteedRef { $0.decode(batch, at: index, spares: spares) } }
        if let problem = batch.problem(at: index) { return .rejected(reason: problem.reason) }
        let tokenRange = batch.fieldRange(.deviceToken, at: index) ?? 0..<0
        if DeviceToken.check(hexUTF8: batch.storage, in: tokenRange) != nil { return .rejected(reason: Reason.badDeviceToken.name) }

        // Each column spelled out, not `headerColumns.contains`: the static array and the closure
        // cost every row about as much as the six bounds it reads.
        let hasOwnHeaders = Self.hasText(batch.fieldRange(.topic, at: index))
            || Self.hasText(batch.fieldRange(.pushType, at: index)) || Self.hasText(batch.fieldRange(.priority, at: index))
            || Self.hasText(batch.fieldRange(.expiration, at: index)) || Self.hasText(batch.fieldRange(.collapseID, at: index))
            || Self.hasText(batch.fieldRange(.apnsID, at: index))
        let ownHeaders: RowHeaders?
        let pushType: PushType
        if hasOwnHeaders, let remembered = memo?.lookup(batch, at: index, columns: Self.headerColumns) {
            ownHeaders = remembered
            pushType = remembered.pushType
        } else if hasOwnHeaders {
            func text(_ column: CSVColumn) -> String? {
                guard let field = batch.field(column, at: index), !field.isEmpty else { return nil }
                return String(decoding: field, as: UTF8.self)
            }
            let values = HeaderValues(topic: text(.topic) ?? defaults.topic,
                                      pushType: text(.pushType) ?? defaults.pushType,
                                      priority: text(.priority) ?? defaults.priority,
                                      expiration: text(.expiration) ?? defaults.expiration,
                                      collapseID: text(.collapseID) ?? defaults.collapseID,
                                      apnsID: text(.apnsID) ?? defaults.apnsID)
            var own: RowHeaders.Columns = []
            for (column, flag) in [(CSVColumn.topic, RowHeaders.Columns.topic), (.pushType, .pushType),
                                   (.priority, .priority), (.expiration, .expiration)]
                where batch.fieldRange(column, at: index).map({ !$0.isEmpty }) ?? false {
                own.insert(flag)
            }
            do {
                let headers = RowHeaders(try NotificationHeaders(parsing: values, auth: auth), own: own)
                memo?.remember(headers)
                ownHeaders = headers
                pushType = headers.pushType
            } catch {
                return .rejected(reason: error.reason.name)
            }
        } else {
            if let runRejection { return .rejected(reason: runRejection.reason.name) }
            ownHeaders = nil
            pushType = runPushType
        }

        let row = batch.number(at: index)
        // One owned copy for the checks and the job: reading `batch.storage` at each use was a
        // second retain and a release of the batch's storage per row.
        let storage = batch.storage
        let uppercase = Self.hasUppercase(storage, tokenRange)
        if let range = batch.fieldRange(.payload, at: index), !range.isEmpty {
            if pushType == .liveactivity {
                if let verdict = Self.liveActivityVerdict(storage, in: range) { return verdict }
            } else if let rejection = NotificationHeaders.payloadRejection(storage, in: range, pushType: pushType) {
                return .rejected(reason: rejection.reason.name)
            }
            guard uppercase else {
                let bytes = RowBytes(in: consume storage, pathToken: tokenRange, payload: range, headers: ownHeaders)
                return .send(Self.job(spares, row: row, bytes))
            }
            let token = storage[tokenRange]
            return .send(Job(row: row, RowBytes(copying: token, lowercaseToken: Self.lowercased(token),
                                                payload: storage[range], headers: ownHeaders)))
        } else if let template {
            let token = storage[tokenRange]
            let payload = template.fill(batch, at: index)[...]
            if let rejection = NotificationHeaders.payloadRejection(payload, pushType: pushType) {
                return .rejected(reason: rejection.reason.name)
            }
            if pushType == .liveactivity, let rule = LiveActivityPayload(json: payload).brokenRule(route: .deviceToken) {
                return .breaksLiveActivityRule(rule)
            }
            return .send(Job(row: row, RowBytes(copying: token, lowercaseToken: Self.lowercased(token), payload: payload,
                                                headers: ownHeaders)))
        } else {
            let rejection = hasOwnHeaders
                ? NotificationHeaders.payloadRejection(defaultPayload, pushType: pushType) : defaultPayloadRejection
            if let rejection { return .rejected(reason: rejection.reason.name) }
            if pushType == .liveactivity, let rule = defaultPayloadLiveActivityRule { return .breaksLiveActivityRule(rule) }
            guard uppercase else {
                let bytes = RowBytes(in: consume storage, pathToken: tokenRange, payload: nil, headers: ownHeaders)
                return .send(Self.job(spares, row: row, bytes))
            }
            let token = storage[tokenRange]
            return .send(Job(row: row, RowBytes(copying: token, lowercaseToken: Self.lowercased(token), payload: nil,
                                                headers: ownHeaders)))
        }
    }

    /// A `liveactivity` row's payload at `range` of `bytes`, checked in place: its rejection, the
    /// ActivityKit rule it breaks, or nil to send it; one pass validates it and reads its `aps`. Not
    /// inlined: only `liveactivity` rows call it, and the other rows' path stays as small as it was.
    @inline(never)
    private static func liveActivityVerdict(_ bytes: borrowing [UInt8], in range: Range<Int>) -> Decoded? {
        var payload: LiveActivityPayload?
        if let rejection = NotificationHeaders.payloadRejection(bytes, in: range, liveActivity: &payload) {
            return .rejected(reason: rejection.reason.name)
        }
        return payload?.brokenRule(route: .deviceToken).map { .breaksLiveActivityRule($0) }
    }

    @inline(__always)
    private static func hasText(_ range: Range<Int>?) -> Bool {
        if let range { !range.isEmpty } else { false }
    }

    /// A spent job from `spares` made this row's, or a new one. Inlined, as `Job.reuse` is.
    @inline(__always)
    private static func job(_ spares: JobSpares?, row: Int, _ rowBytes: consuming RowBytes) -> Job {
        guard let job = spares?.next() else { return Job(row: row, rowBytes) }
        job.reuse(row: row, rowBytes)
        return job
    }

    /// The hex token in lowercase, as `:path` carries it; nil when it already is (the usual case).
    static func lowercased(_ token: ArraySlice<UInt8>) -> ArraySlice<UInt8>? {
        guard token.withUnsafeBufferPointer(hasUppercase) else { return nil }
        return token.map { $0 | 0x20 }[...]
    }

    /// The hex token at `range` of `bytes` has an uppercase digit; read in place (a slice is a retain).
    static func hasUppercase(_ bytes: borrowing [UInt8], _ range: Range<Int>) -> Bool {
        bytes.withUnsafeBufferPointer { hasUppercase(UnsafeBufferPointer(rebasing: $0[range])) }
    }

    private static func hasUppercase(_ token: UnsafeBufferPointer<UInt8>) -> Bool {
        // Bytes already checked to be hex digits: 'A'...'F' are the only ones with 0x40 set and 0x20
        // clear. One pass of bit operations, no branch per byte.
        var uppercase: UInt8 = 0
        for byte in token { uppercase |= byte & ~(byte << 1) & 0x40 }
        return uppercase != 0
    }
}
