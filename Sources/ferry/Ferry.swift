import ArgumentParser

@main
struct Ferry: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ferry",
        abstract: "URLSession as a service: durable HTTP transfers over a REST API.",
        version: FerryVersion.current,
        subcommands: [ServeCommand.self, MigrateCommand.self, TenantCommand.self],
        defaultSubcommand: ServeCommand.self
    )
}

enum FerryVersion {
    static let current = "0.1.0"
}
