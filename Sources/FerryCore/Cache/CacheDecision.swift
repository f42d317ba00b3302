/// What a task does about the cache before it touches the network.
public enum CacheDecision: Sendable, Equatable {
    /// Answer from the stored entry (`CachedResponse.headForReuse` and its body); no request
    /// is sent and the transaction's `resourceFetchType` is `localCache`.
    case useCached
    /// Send the request with these fields added; a 304 is answered from the entry after
    /// `CacheRevalidation.merge`, anything else replaces it.
    case revalidate(conditionalHeaders: [CachedHeaderField])
    /// Send the request as it is; the cache has nothing usable.
    case fetch
    /// The request may not touch the network and the cache cannot answer it: the task
    /// completes with `CacheLookup.notCachedError` (-1009), as URLSession does.
    case failNotCached
}
