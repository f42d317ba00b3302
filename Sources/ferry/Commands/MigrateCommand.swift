import ArgumentParser
import Logging

/// `ferry migrate`: applies missing migrations and exits (also done by `ferry serve` on start).
struct MigrateCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(commandName: "migrate", abstract: "Apply database migrations.")

    @OptionGroup var options: FerrySettingsOptions

    func run() async throws {
        let settings = try options.resolve()
        LogSetup.bootstrap(settings)
        let opened = try await DatabaseLauncher(settings: settings, role: .command, logger: Logger(label: "ferry"))
            .open(poolSize: 1, applicationName: "ferry migrate")
        await opened.close()
        print("The database schema is up to date.")
    }
}
