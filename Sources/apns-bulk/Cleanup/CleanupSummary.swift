import Cleanup
import Pipeline

/// `cleanup`'s summary: one line for a person, or one JSON object (`--json`) for a script.
enum CleanupSummary {
    static func line(_ counts: CleanupCounts, plan: CleanupPlan) -> String {
        let done = counts.action == "mark" ? "marked" : "deleted"
        var parts = ["\(counts.matched) rows matched",
                     "\(counts.affected) \(counts.dryRun ? "would be " : "")\(done)"
                        + (counts.unjudged > 0 ? " (\(counts.unjudged) of them unjudged: no unregistered_at)" : ""),
                     "\(counts.keptRegisteredAfter) kept (registered again after)",
                     "\(counts.notFound) of \(counts.tokens) list tokens not found"]
        if counts.alreadyMarked > 0 { parts.append("\(counts.alreadyMarked) already marked") }
        if counts.unreadableRegisteredAt > 0 {
            parts.append("\(counts.unreadableRegisteredAt) kept (registered-at unreadable)")
        }
        let reasons = counts.byReason.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }
        parts.append("by reason: " + (reasons.isEmpty ? "none" : reasons.joined(separator: ", ")))
        var text = "cleanup: " + parts.joined(separator: ", ")
        text += counts.dryRun ? "; dry run, nothing changed" : "; \(counts.batches) \(counts.batches == 1 ? "batch" : "batches") committed"
        if !counts.ruleApplied {
            text += "; Apple's rule could not be applied (no --registered-at-column): every matched row was judged dead"
        }
        return text
    }

    static func json(_ counts: CleanupCounts) -> String {
        var out: [UInt8] = []
        func key(_ name: String) {
            out.append(out.isEmpty ? UInt8(ascii: "{") : UInt8(ascii: ","))
            JSONText.appendString(name, to: &out)
            out.append(UInt8(ascii: ":"))
        }
        func number(_ name: String, _ value: Int) {
            key(name)
            JSONText.appendInteger(Int64(value), to: &out)
        }
        func flag(_ name: String, _ value: Bool) {
            key(name)
            out.append(contentsOf: (value ? "true" : "false").utf8)
        }
        number("matched", counts.matched)
        number("affected", counts.affected)
        number("kept_registered_after", counts.keptRegisteredAfter)
        number("not_found", counts.notFound)
        key("by_reason")
        out.append(UInt8(ascii: "{"))
        for (index, (reason, count)) in counts.byReason.sorted(by: { $0.key < $1.key }).enumerated() {
            if index > 0 { out.append(UInt8(ascii: ",")) }
            JSONText.appendString(reason, to: &out)
            out.append(UInt8(ascii: ":"))
            JSONText.appendInteger(Int64(count), to: &out)
        }
        out.append(UInt8(ascii: "}"))
        flag("dry_run", counts.dryRun)
        number("unjudged", counts.unjudged)
        number("already_marked", counts.alreadyMarked)
        number("unreadable_registered_at", counts.unreadableRegisteredAt)
        flag("rule_applied", counts.ruleApplied)
        key("action")
        JSONText.appendString(counts.action, to: &out)
        number("batches", counts.batches)
        number("tokens", counts.tokens)
        out.append(UInt8(ascii: "}"))
        return String(decoding: out, as: UTF8.self)
    }
}
