import FerryTestSupport
import Postgres

/// Extra pools on a test database: another "instance" sharing it.
enum PostgresPoolFactory {
    static func pool(conninfo: String, size: Int = 4) -> PostgresPool {
        PostgresPool(configuration: .init(conninfo: conninfo, size: size, applicationName: "ferry store test"), logger: quietLogger)
    }
}
