import FerryCore
import FerryTestSupport
import Foundation
import Testing

@testable import FerryEngine

@Suite("OpenedPartialFile: a download's file, opened before the transfer reaches a worker")
final class OpenedPartialFileTests {
    let folder: String
    var partialPath: String { folder + "/task.part" }
    var finishedPath: String { folder + "/task.download" }

    init() throws {
        folder = try TestScratch.folder(named: "opened-partial")
    }

    /// Each test case has an instance of its own, and its folder goes with it.
    deinit {
        try? FileManager.default.removeItem(atPath: folder)
    }

    func checkpoint(bytesOnDisk: Int64) -> TransferCheckpoint {
        TransferCheckpoint(
            partialFile: "task.part", bytesOnDisk: bytesOnDisk, validator: .strongETag("\"v1\""),
            url: "http://127.0.0.1/resumed", expectedTotalBytes: 10
        )
    }

    func write(_ bytes: Int, to path: String) throws {
        try Data(repeating: 7, count: bytes).write(to: URL(fileURLWithPath: path))
    }

    /// A partial file on disk, the checkpoint the task was claimed with, and what opening keeps.
    struct Case: Sendable, CustomTestStringConvertible {
        var onDisk: Int
        var checkpointed: Int64?
        var resumes: Bool
        var kept: Int64
        var testDescription: String
    }

    @Test("the file keeps the checkpoint's bytes when it holds them all, and is emptied to start over otherwise", arguments: [
        Case(onDisk: 5, checkpointed: nil, resumes: false, kept: 0, testDescription: "no checkpoint: an empty file"),
        Case(onDisk: 6, checkpointed: 4, resumes: true, kept: 4, testDescription: "the checkpoint's bytes kept, those after dropped"),
        Case(onDisk: 3, checkpointed: 4, resumes: false, kept: 0, testDescription: "shorter than its checkpoint: not trusted"),
    ])
    func keepsWhatTheCheckpointVouchesFor(_ example: Case) throws {
        try write(example.onDisk, to: partialPath)
        let claimed = example.checkpointed.map { checkpoint(bytesOnDisk: $0) }
        let opened = try OpenedPartialFile.open(at: partialPath, finishedPaths: [finishedPath], checkpoint: claimed)
        #expect(opened.resumingFrom == (example.resumes ? claimed : nil))
        #expect(opened.file.bytesWritten == example.kept)
        #expect(FileOperations.size(of: partialPath) == example.kept)
    }

    @Test("a finished file whose completion was never recorded is taken back whole")
    func recoversAFinishedFile() throws {
        try write(10, to: finishedPath)
        let opened = try OpenedPartialFile.open(at: partialPath, finishedPaths: [finishedPath], checkpoint: checkpoint(bytesOnDisk: 4))
        #expect(opened.resumingFrom?.bytesOnDisk == 10)
        #expect(opened.file.bytesWritten == 10)
        #expect(FileOperations.size(of: finishedPath) == nil)
    }

    @Test("finished files are looked for in order: the task's own, then the one of the task whose resume data it adopted")
    func recoversFromTheFirstFinishedFileFound() throws {
        let adopted = folder + "/adopted.download"
        try write(7, to: adopted)
        // The task's own is missing: the adopted task's is taken.
        let first = try OpenedPartialFile.open(at: partialPath, finishedPaths: [finishedPath, adopted], checkpoint: checkpoint(bytesOnDisk: 4))
        #expect(first.resumingFrom?.bytesOnDisk == 7)
        withExtendedLifetime(first) {}
        FileOperations.remove(partialPath)
        // Both there: the task's own comes first, the other is left.
        try write(10, to: finishedPath)
        try write(7, to: adopted)
        let second = try OpenedPartialFile.open(at: partialPath, finishedPaths: [finishedPath, adopted], checkpoint: checkpoint(bytesOnDisk: 4))
        #expect(second.resumingFrom?.bytesOnDisk == 10)
        #expect(FileOperations.size(of: adopted) == 7)
        withExtendedLifetime(second) {}
    }

    @Test("a finished file the URL cache links to is left to the cache: the transfer starts over in a file of its own")
    func leavesACachedFileAlone() throws {
        try write(10, to: finishedPath)
        let cachedPath = folder + "/cached-body"
        #expect(link(finishedPath, cachedPath) == 0)
        // Neither with a checkpoint nor without one is the cache's inode trimmed or written.
        for claimed in [checkpoint(bytesOnDisk: 4), nil] {
            let opened = try OpenedPartialFile.open(at: partialPath, finishedPaths: [finishedPath], checkpoint: claimed)
            #expect(opened.resumingFrom == nil)
            #expect(opened.file.bytesWritten == 0)
            try [1, 2, 3].withUnsafeBytes { try opened.file.append($0) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: cachedPath)) == Data(repeating: 7, count: 10))
            #expect(FileOperations.size(of: partialPath) == Int64(3 * MemoryLayout<Int>.size))
            if claimed != nil {
                // Back as the finished file for the second round, linked to the cache again.
                FileOperations.remove(partialPath)
                #expect(link(cachedPath, finishedPath) == 0)
            }
        }
    }

    @Test("a second opening of the same file, while the first is held, is refused as busy")
    func refusesASecondOwner() throws {
        let first = try OpenedPartialFile.open(at: partialPath, finishedPaths: [], checkpoint: nil)
        #expect(throws: FileFailure.self) {
            _ = try OpenedPartialFile.open(at: partialPath, finishedPaths: [], checkpoint: nil)
        }
        withExtendedLifetime(first) {}
    }
}
