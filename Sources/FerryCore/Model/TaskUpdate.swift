/// A validated `PATCH /v1/tasks/{id}` body: the properties URLSessionTask lets its owner change
/// after creation (`priority`, `taskDescription`, `countOfBytesClientExpectsToSend/Receive`).
/// Absent members keep their value; `"taskDescription": null` clears it.
public struct TaskUpdate: Sendable, Equatable {
    public var priority: Double?
    /// `.some(nil)` clears the description.
    public var taskDescription: String??
    public var countOfBytesClientExpectsToSend: Int64?
    public var countOfBytesClientExpectsToReceive: Int64?

    public init(priority: Double? = nil, taskDescription: String?? = nil) {
        self.priority = priority
        self.taskDescription = taskDescription
    }

    public init(validating value: JSONValue) throws {
        let reader = try FieldReader(value)
        priority = try reader.number("priority", in: 0...1)
        if let text = try reader.string("taskDescription", maxLength: 4096) {
            taskDescription = .some(text)
        } else if reader.isExplicitNull("taskDescription") {
            taskDescription = .some(nil)
        }
        countOfBytesClientExpectsToSend = try reader.integer("countOfBytesClientExpectsToSend", in: TaskCreation.clientExpectedBytes).map(Int64.init)
        countOfBytesClientExpectsToReceive = try reader.integer("countOfBytesClientExpectsToReceive", in: TaskCreation.clientExpectedBytes).map(Int64.init)
        try reader.finish()
    }
}
