import Foundation

/// Two `ferry serve` processes on one database and one data folder, and a tenant, for the
/// tests where one instance dies or is told something through the other.
struct InstancePair {
    let left: FerryInstance
    let right: FerryInstance
    let apiKey: String

    /// `environment` is added to both instances' (settings a test shortens, such as leases).
    static func start(in testbed: Testbed, environment: [String: String] = [:]) async throws -> InstancePair {
        async let left = testbed.start("left") { $0.extraEnvironment.merge(environment) { $1 } }
        async let right = testbed.start("right") { $0.extraEnvironment.merge(environment) { $1 } }
        let pair = try await (left, right)
        let (_, client) = try await testbed.makeTenant(on: pair.0)
        guard let key = client.token else { throw HarnessError("no API key") }
        return InstancePair(left: pair.0, right: pair.1, apiKey: key)
    }

    func client(_ instance: FerryInstance) -> FerryClient {
        FerryClient(baseURL: instance.baseURL, token: apiKey)
    }

    /// The instance whose name is `instanceID`, and the other one.
    func split(owner instanceID: String) throws -> (owner: FerryInstance, other: FerryInstance) {
        switch instanceID {
        case left.configuration.instanceID: (left, right)
        case right.configuration.instanceID: (right, left)
        default: throw HarnessError("the lease owner \(instanceID) is neither instance")
        }
    }

    /// Waits until one instance holds the task's lease and has received `bytes` (and, with
    /// `checkpointed`, recorded a checkpoint of at least that many); returns the owner.
    func runningOwner(
        of taskID: String, in testbed: Testbed, atLeast bytes: Int, checkpointed: Bool = false
    ) async throws -> (owner: FerryInstance, other: FerryInstance) {
        let reader = client(left)
        let owner = try await eventually(timeout: .seconds(20), every: .milliseconds(100)) { () -> String? in
            let task = try await reader.task(taskID)
            guard task.state == "running", task.countOfBytesReceived >= Int64(bytes) else { return nil }
            if checkpointed, try await testbed.checkpointedBytes(of: taskID) < Int64(bytes) { return nil }
            return try await testbed.leaseOwner(of: taskID)
        }
        guard let owner else {
            let task = try await reader.task(taskID)
            throw HarnessError("no instance was running \(taskID) with \(bytes) bytes (state \(task.state), \(task.countOfBytesReceived) bytes)\n\(testbed.logs())")
        }
        return try split(owner: owner)
    }
}
