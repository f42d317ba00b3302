import FerryStore

/// The ready heads the last claim left for one endpoint, oldest first, handed to slots a few at
/// a time; those a slot did not look at come back first in line. Both ways cost what is handed
/// out, not what waits: giving back by building a new list of every waiting head (hundreds in a
/// backlog) at each of a slot's switches was a few per cent of Ferry's CPU in bench/decisions.sh.
struct CandidateQueue: Sendable {
    /// Handed back by slots, oldest first; all older than `waiting`'s.
    private var returned: [DeliveryCandidate] = []
    private var waiting: ArraySlice<DeliveryCandidate>

    init(_ candidates: some Sequence<DeliveryCandidate>) {
        waiting = ArraySlice(candidates)
    }

    /// The oldest `count` (or fewer), taken out.
    mutating func take(_ count: Int) -> [DeliveryCandidate] {
        var taken = Array(returned.prefix(count))
        returned.removeFirst(taken.count)
        let more = waiting.prefix(count - taken.count)
        waiting = waiting.dropFirst(more.count)
        taken.append(contentsOf: more)
        return taken
    }

    /// Candidates taken and not looked at, first in line again.
    mutating func giveBack(_ unused: ArraySlice<DeliveryCandidate>) {
        returned.insert(contentsOf: unused, at: 0)
    }
}
