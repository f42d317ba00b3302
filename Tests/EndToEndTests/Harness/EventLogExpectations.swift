import Testing

/// What every completed download's event log must look like, however many owners it had:
/// gapless sequences, created once, completed once and last, and a resume at `resumedAt`.
func expectCompleteEventLog(_ events: [RecordedEvent], resumedAt: Int?, sourceLocation: SourceLocation = #_sourceLocation) {
    let sequences = events.map(\.sequence)
    let first = sequences.first ?? 0
    #expect(sequences == Array(first..<(first + Int64(sequences.count))), "event sequences have gaps: \(sequences)", sourceLocation: sourceLocation)
    let types = events.map(\.type)
    #expect(types.filter { $0 == "task.didCreateTask" }.count == 1, "events: \(types)", sourceLocation: sourceLocation)
    #expect(types.filter { $0 == "downloadTask.didFinishDownloadingTo" }.count == 1, "events: \(types)", sourceLocation: sourceLocation)
    #expect(types.filter { $0 == "task.didCompleteWithError" }.count == 1, "events: \(types)", sourceLocation: sourceLocation)
    #expect(types.last == "task.didCompleteWithError", "events: \(types)", sourceLocation: sourceLocation)
    if let resumedAt {
        let offsets = events.filter { $0.type == "downloadTask.didResumeAtOffset" }.compactMap(\.fileOffset)
        #expect(offsets.contains(Double(resumedAt)), "didResumeAtOffset offsets \(offsets), the origin saw a resume at \(resumedAt)", sourceLocation: sourceLocation)
    }
}
