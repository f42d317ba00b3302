import FerryCore
import Foundation
import Testing

@testable import FerryEngine

@Suite("OpenedPartialFile: a download's file, opened before the transfer reaches a worker")
struct OpenedPartialFileTests {
    let folder: String
    var partialPath: String { folder + "/task.part" }
    var finishedPath: String { folder + "/task.download" }

    init() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("opened-partial-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
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

    @Test("without a checkpoint it creates an empty file and starts over")
    func startsOver() throws {
        try write(5, to: partialPath)
        let opened = try OpenedPartialFile.open(at: partialPath, finishedPath: finishedPath, checkpoint: nil)
        #expect(opened.resumingFrom == nil)
        #expect(opened.file.bytesWritten == 0)
        #expect(FileOperations.size(of: partialPath) == 0)
    }

    @Test("with a checkpoint the file still holds, it keeps those bytes and drops any after them")
    func resumes() throws {
        try write(6, to: partialPath)
        let opened = try OpenedPartialFile.open(at: partialPath, finishedPath: finishedPath, checkpoint: checkpoint(bytesOnDisk: 4))
        #expect(opened.resumingFrom == checkpoint(bytesOnDisk: 4))
        #expect(opened.file.bytesWritten == 4)
        #expect(FileOperations.size(of: partialPath) == 4)
    }

    @Test("a file shorter than its checkpoint cannot be trusted: emptied, and the transfer starts over")
    func distrustsAShortFile() throws {
        try write(3, to: partialPath)
        let opened = try OpenedPartialFile.open(at: partialPath, finishedPath: finishedPath, checkpoint: checkpoint(bytesOnDisk: 4))
        #expect(opened.resumingFrom == nil)
        #expect(FileOperations.size(of: partialPath) == 0)
    }

    @Test("a finished file whose completion was never recorded is taken back whole")
    func recoversAFinishedFile() throws {
        try write(10, to: finishedPath)
        let opened = try OpenedPartialFile.open(at: partialPath, finishedPath: finishedPath, checkpoint: checkpoint(bytesOnDisk: 4))
        #expect(opened.resumingFrom?.bytesOnDisk == 10)
        #expect(opened.file.bytesWritten == 10)
        #expect(FileOperations.size(of: finishedPath) == nil)
    }

    @Test("a second opening of the same file, while the first is held, is refused as busy")
    func refusesASecondOwner() throws {
        let first = try OpenedPartialFile.open(at: partialPath, finishedPath: nil, checkpoint: nil)
        #expect(throws: FileFailure.self) {
            _ = try OpenedPartialFile.open(at: partialPath, finishedPath: nil, checkpoint: nil)
        }
        withExtendedLifetime(first) {}
    }
}
