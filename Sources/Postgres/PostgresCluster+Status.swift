extension PostgresCluster {
    /// Whether this cluster's server is running now (started by this process or another one).
    /// A command that finds it running uses it and leaves it running for its owner.
    public var isRunning: Bool {
        PostmasterLockFile(path: configuration.absoluteDataDirectory + "/postmaster.pid")?.isServerAlive ?? false
    }
}
