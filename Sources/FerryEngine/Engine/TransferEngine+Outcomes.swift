import FerryCore
import FerryStore
import Foundation

extension TransferEngine {
    /// Turns an ended transfer into what is written: the policy decides (complete, release for
    /// a retry, or nothing), the files are settled first (synced and renamed, or removed), and
    /// the outcome joins the ordered write queue.
    func record(_ ended: EndedTransfer) async {
        let claim = ended.job.claim
        let policy = TransferEndPolicy(
            sessionKind: claim.configuration.kind,
            waitsForConnectivity: claim.configuration.waitsForConnectivity,
            retry: configuration.retryPolicy
        )
        var random = SystemRandomNumberGenerator()
        let disposition = policy.disposition(
            for: ended.end, attempt: ended.job.attempt, wasWaitingForConnectivity: ended.job.attempt > 1,
            now: Date(), resourceDeadline: claim.resourceDeadline, using: &random
        )
        switch disposition {
        case .abandon:
            return
        case .release(let notBefore, let isWaitingForConnectivity):
            if isWaitingForConnectivity {
                writer.enqueue(.events([OwnerEvent(lease: ended.job.lease, type: .taskIsWaitingForConnectivity, data: [:])]))
            }
            let checkpoint = await checkpoint(of: ended)
            writer.enqueue(.finish([(ended.job.lease, .released(
                checkpoint: checkpoint, notBefore: notBefore,
                bytesReceived: checkpoint?.bytesOnDisk ?? 0, bytesSent: 0
            ))]))
        case .complete(let policyError, let attachesResumeData):
            let completion = await completion(of: ended, error: policyError, attachesResumeData: attachesResumeData)
            writer.enqueue(.finish([(ended.job.lease, .completed(completion))]))
        }
    }

    private func completion(of ended: EndedTransfer, error policyError: TransferError?, attachesResumeData: Bool) async -> TaskCompletion {
        let claim = ended.job.claim
        let failingURL = ended.currentRequest.url
        var completion = TaskCompletion(
            response: ended.response,
            currentRequest: ended.currentRequest,
            bytesReceived: ended.bytesReceived,
            bytesSent: ended.bytesSent,
            bytesExpectedToReceive: ended.bytesExpectedToReceive,
            metrics: try? JSONValue(encoding: ended.metrics)
        )
        var error: TransferError? = policyError
        switch ended.end {
        case .finished:
            if claim.kind == .download {
                do {
                    completion.downloadFile = try await finalizeDownload(ended)
                } catch {
                    logger.error("finishing a download failed", metadata: ["task": "\(claim.taskID)", "error": "\(error)"])
                    let outOfSpace = (error as? FileFailure)?.isOutOfSpace == true
                    completion = TaskCompletion(
                        error: TransferError(code: .cannotWriteToFile, failingURL: failingURL, reason: outOfSpace ? "the server's disk is full" : nil),
                        bytesReceived: ended.bytesReceived
                    )
                    return completion
                }
            } else {
                completion.responseBody = ended.responseBody ?? []
            }
            return completion
        case .failed(let failure):
            error = failure
        case .stopped(.cancel), .stopped(.cancelProducingResumeData):
            error = TransferError(code: .cancelled, failingURL: failingURL)
        case .shuttingDown:
            error = TransferError(code: .networkConnectionLost, failingURL: failingURL, reason: "the Ferry instance running this transfer shut down")
        case .stopped(.suspend), .leaseLost:
            break
        }
        if attachesResumeData, claim.kind == .download, let checkpoint = await checkpoint(of: ended) {
            let token = resumeData.token(tenantID: claim.tenantID, taskID: claim.taskID, originalRequest: claim.originalRequest, checkpoint: checkpoint)
            error?.resumeData = token
            // The partial file stays only while resume data refers to it.
            completion.checkpoint = token == nil ? nil : checkpoint
        }
        if completion.checkpoint == nil {
            await removePartialFile(of: ended)
        }
        completion.error = error
        return completion
    }

    /// Syncs a download's partial file and says what is durably in it. A job that never reached
    /// a worker keeps the checkpoint it was claimed with.
    func checkpoint(of ended: EndedTransfer) async -> TransferCheckpoint? {
        guard ended.job.claim.kind == .download else { return nil }
        guard let file = ended.file else { return ended.job.claim.checkpoint }
        guard let validator = ended.validator, let durable = try? await blocking.run({ try file.sync() }), durable > 0 else {
            return nil
        }
        return TransferCheckpoint(
            partialFile: ended.job.partialName ?? TenantFiles.partialName(taskID: ended.job.taskID),
            bytesOnDisk: durable, validator: validator, url: ended.currentRequest.url,
            expectedTotalBytes: ended.expectedTotalBytes
        )
    }

    /// fsync, size check, rename into the downloads folder, fsync the folder. Returns the file name.
    private func finalizeDownload(_ ended: EndedTransfer) async throws -> String {
        let job = ended.job
        let name = TenantFiles.downloadName(taskID: job.taskID)
        let destination = try files.path(.downloads, tenantID: job.claim.tenantID, name: name)
        guard let file = ended.file else { throw FileFailure(operation: "open", path: destination, errno: 2) }
        let expected = ended.expectedTotalBytes
        _ = try await blocking.run { try FileOperations.finalize(file, to: destination, expectedSize: expected) }
        return name
    }

    private func removePartialFile(of ended: EndedTransfer) async {
        guard let path = ended.job.partialPath else { return }
        _ = try? await blocking.run { FileOperations.remove(path) }
    }
}
