import FerryStore
import ServiceLifecycle

/// Reads the operator token again every few seconds (`AdminTokenMemory`): a token rotated by
/// another instance's start is refused here, and the new one accepted, within `interval`, while
/// no operator request ever waits for the database.
public struct AdminTokenRefresher: Service {
    let settings: SettingsStore
    let interval: Duration

    public init(settings: SettingsStore, interval: Duration = .seconds(5)) {
        self.settings = settings
        self.interval = interval
    }

    public func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                await settings.refreshAdminToken()
            }
        }
    }
}
