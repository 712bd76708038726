/// Reading `EXPLAIN` output alike on one server and on Citus.
enum PlanText {
    /// On Citus the plan is the worker's, over a shard: `notes_102008` for notes, and its
    /// indexes alike. Without the shard ids it reads as on one server.
    static func withoutShardSuffixes(_ plan: String) -> String {
        plan.replacing(/([a-z])_1[0-9]{5}\b/) { String($0.output.1) }
    }
}
