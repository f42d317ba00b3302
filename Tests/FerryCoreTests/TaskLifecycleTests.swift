import FerryCore
import Testing

@Suite("Task lifecycle state machine")
struct TaskLifecycleTests {
    @Test("resume starts a suspended task and is ignored otherwise")
    func resume() {
        var task = TaskLifecycle(state: .suspended, isOwned: false)
        let action1 = task.apply(.resume)
        #expect(action1 == .schedule)
        #expect(task.state == .running)
        let action2 = task.apply(.resume)
        #expect(action2 == .none)
        var done = TaskLifecycle(state: .completed, isOwned: false)
        let action3 = done.apply(.resume)
        #expect(action3 == .none)
        #expect(done.state == .completed)
    }

    @Test("suspend stops an owned transfer, unschedules a queued one")
    func suspend() {
        var owned = TaskLifecycle(state: .running, isOwned: true)
        let action4 = owned.apply(.suspend)
        #expect(action4 == .stopTransfer(.suspend))
        #expect(owned.state == .suspended)
        var queued = TaskLifecycle(state: .running, isOwned: false)
        let action5 = queued.apply(.suspend)
        #expect(action5 == .unschedule)
        #expect(queued.state == .suspended)
        var canceling = TaskLifecycle(state: .canceling, isOwned: true)
        let action6 = canceling.apply(.suspend)
        #expect(action6 == .none)
    }

    @Test("cancel completes at once unless a transfer must be stopped first")
    func cancel() {
        var suspended = TaskLifecycle(state: .suspended, isOwned: false)
        let action7 = suspended.apply(.cancel)
        #expect(action7 == .completeCancelled(producingResumeData: false))
        #expect(suspended.state == .completed)

        var owned = TaskLifecycle(state: .running, isOwned: true)
        let action8 = owned.apply(.cancel)
        #expect(action8 == .stopTransfer(.cancel))
        #expect(owned.state == .canceling)
        let action9 = owned.apply(.cancel)
        #expect(action9 == .none)
        let ended10 = owned.transferEnded()
        #expect(ended10)
        #expect(owned.state == .completed)
        let ended11 = owned.transferEnded()
        #expect(!ended11)

        var producing = TaskLifecycle(state: .running, isOwned: true)
        let action12 = producing.apply(.cancelProducingResumeData)
        #expect(action12 == .stopTransfer(.cancelProducingResumeData))
        var queued = TaskLifecycle(state: .running, isOwned: false)
        let action13 = queued.apply(.cancelProducingResumeData)
        #expect(action13 == .completeCancelled(producingResumeData: true))
    }

    @Test("a completed task ignores every command")
    func completed() {
        for command in [TaskLifecycle.Command.resume, .suspend, .cancel, .cancelProducingResumeData] {
            var task = TaskLifecycle(state: .completed, isOwned: false)
            let action14 = task.apply(command)
            #expect(action14 == .none)
            #expect(task.state == .completed)
        }
    }
}
