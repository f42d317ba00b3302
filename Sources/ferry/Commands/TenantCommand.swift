import ArgumentParser
import FerryCore
import Foundation
import Logging

/// `ferry tenant create NAME`.
struct TenantCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tenant", abstract: "Manage tenants.", subcommands: [Create.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a tenant and print its API key (shown once).")

        @Argument(help: "The tenant's name.")
        var name: String

        @OptionGroup var options: FerrySettingsOptions

        func validate() throws {
            guard !name.isEmpty, name.utf8.count <= 200 else { throw ValidationError("NAME must be 1 to 200 bytes long.") }
        }

        func run() async throws {
            let settings = try options.resolve()
            LogSetup.bootstrap(settings)
            let opened = try await DatabaseLauncher(settings: settings, role: .command, logger: Logger(label: "ferry"))
                .open(poolSize: 1, applicationName: "ferry tenant create")
            do {
                let (tenant, apiKey) = try await opened.database.tenants.create(name: name, quotas: TenantQuotas())
                print("tenant \(tenant.id) \"\(tenant.name)\"")
                print("API key (shown once): \(apiKey)")
            } catch {
                await opened.close()
                throw error
            }
            await opened.close()
        }
    }
}
