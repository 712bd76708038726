import AsyncHTTPClient
import Foundation
import JWTKit
import Logging
import NIOCore

/// Providers' signing keys (JWKS), fetched over HTTPS and shared by every tenant that
/// uses the same key URL. A set is kept for as long as its `Cache-Control` says (an hour
/// when it says nothing); a token naming a key the set lacks (the provider rotated) makes
/// it be fetched again, at most once a minute per URL; and when the provider cannot be
/// reached the last good set stays in use. Concurrent callers share one fetch.
actor ProviderKeyCache {
    /// One signing key, and a jwt-kit collection holding it alone.
    struct Key: Sendable {
        let jwk: JWK
        let collection: JWTKeyCollection
    }

    /// One fetched set: the keys by id.
    struct KeySet: Sendable {
        let byID: [String: Key]
    }

    enum Lookup: Sendable {
        case found(Key)
        /// The set (fresh, or refetched just now) has no key with that id.
        case unknownKey
    }

    private struct Entry {
        var keys: KeySet?
        var freshUntil = ContinuousClock.now
        /// The set is not used past this even when the provider cannot be reached: a key it
        /// withdrew (compromised) must stop verifying some time.
        var usableUntil = ContinuousClock.now
        var lastUnknownKeyRefetch: ContinuousClock.Instant?
        /// After a failed fetch, no new attempt before this: a provider that is down is not
        /// asked again for every sign-in.
        var quietUntil: ContinuousClock.Instant?
        var fetch: Task<(KeySet, Duration), any Error>?
    }

    /// Fetching failed and there is no earlier set to fall back on.
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    private var entries: [String: Entry] = [:]
    private let client: HTTPClient
    private let settings: IdentitySettings
    private static let maximumBytes = 512 * 1024
    private static let quietAfterFailure: Duration = .seconds(10)
    /// How long past its freshness a set serves while the provider is unreachable.
    static let staleLimit: Duration = .seconds(24 * 3600)

    init(client: HTTPClient, settings: IdentitySettings) {
        self.client = client
        self.settings = settings
    }

    func key(id: String, at url: String, logger: Logger) async throws -> Lookup {
        let now = ContinuousClock.now
        let entry = entries[url] ?? Entry()
        let quiet = entry.quietUntil.map { now < $0 } ?? false
        if let keys = entry.keys, now < entry.freshUntil || (quiet && now < entry.usableUntil) {
            if let key = keys.byID[id] { return .found(key) }
            let mayRefetch = !quiet && (entry.lastUnknownKeyRefetch.map { now - $0 >= settings.unknownKeyRefetchInterval } ?? true)
            guard mayRefetch else { return .unknownKey }
            entries[url, default: Entry()].lastUnknownKeyRefetch = now
            logger.info(
                "identity provider key unknown; fetching the keys again",
                metadata: ["kid": "\(IDTokenVerifier.shown(id))", "keys_url": "\(url)"])
            guard let refreshed = try? await refresh(url, logger: logger) else { return .unknownKey }
            return refreshed.byID[id].map { .found($0) } ?? .unknownKey
        }
        let keys: KeySet
        do {
            keys = try await refresh(url, logger: logger)
        } catch {
            // The provider is down or answered nonsense: the last good set, if any, still serves
            // (for a day past its freshness at most).
            guard let previous = entries[url]?.keys, let limit = entries[url]?.usableUntil, now < limit else {
                throw Unavailable(description: "\(error)")
            }
            keys = previous
        }
        return keys.byID[id].map { .found($0) } ?? .unknownKey
    }

    /// Fetches the set (or joins a fetch under way) and keeps it.
    private func refresh(_ url: String, logger: Logger) async throws -> KeySet {
        if let running = entries[url]?.fetch { return try await running.value.0 }
        let task = Task { try await fetch(url) }
        entries[url, default: Entry()].fetch = task
        defer { entries[url]?.fetch = nil }
        do {
            let (keys, lifetime) = try await task.value
            entries[url]?.keys = keys
            entries[url]?.freshUntil = .now + lifetime
            entries[url]?.usableUntil = .now + lifetime + Self.staleLimit
            entries[url]?.quietUntil = nil
            return keys
        } catch {
            entries[url]?.quietUntil = .now + Self.quietAfterFailure
            logger.warning(
                "identity provider keys could not be fetched",
                metadata: ["keys_url": "\(url)", "error": "\(error)", "cached_set": "\(entries[url]?.keys != nil)"])
            throw error
        }
    }

    private func fetch(_ url: String) async throws -> (KeySet, Duration) {
        guard ProviderURL.isAllowed(url, loopback: settings.allowLoopbackKeyURLs) else {
            throw Unavailable(description: "key URL \(url) is not https (plain http to loopback needs LR_IDENTITY_ALLOW_LOOPBACK)")
        }
        var request = HTTPClientRequest(url: url)
        request.headers.add(name: "Accept", value: "application/json")
        let response = try await client.execute(request, timeout: .init(settings.providerTimeout))
        guard response.status == .ok else { throw Unavailable(description: "key URL answered \(response.status.code)") }
        let body = try await response.body.collect(upTo: Self.maximumBytes)
        let keys = try await Self.keySet(from: Data(buffer: body))
        guard !keys.byID.isEmpty else { throw Unavailable(description: "key URL served no usable signing key") }
        let lifetime = CacheControl.maxAge(response.headers.first(name: "Cache-Control")) ?? settings.defaultKeysLifetime
        return (keys, lifetime)
    }

    /// The signing keys of a JWKS document; a key that jwt-kit cannot use (another type,
    /// no `kid`, meant for encryption) is left out rather than failing the whole set.
    static func keySet(from data: Data) async throws -> KeySet {
        guard let document = try JSONSerialization.jsonObject(with: data) as? [String: Any],
            let keys = document["keys"] as? [Any]
        else { throw Unavailable(description: "key URL served no JWKS (an object with \"keys\")") }
        var byID: [String: Key] = [:]
        for case let object as [String: Any] in keys {
            if let use = object["use"] as? String, use != "sig" { continue }
            let collection = JWTKeyCollection()
            guard let raw = try? JSONSerialization.data(withJSONObject: object),
                let jwk = try? JSONDecoder().decode(JWK.self, from: raw),
                let kid = jwk.keyIdentifier?.string, byID[kid] == nil,
                (try? await collection.add(jwk: jwk)) != nil
            else { continue }
            byID[kid] = Key(jwk: jwk, collection: collection)
        }
        return KeySet(byID: byID)
    }
}

/// Which URLs the service calls providers at.
enum ProviderURL {
    static func isAllowed(_ url: String, loopback: Bool) -> Bool {
        guard let components = URLComponents(string: url), let host = components.host, components.user == nil else { return false }
        switch components.scheme {
        case "https": return true
        case "http": return loopback && ["127.0.0.1", "localhost", "::1", "[::1]"].contains(host)
        default: return false
        }
    }
}

/// The lifetime `Cache-Control` gives a response: `max-age` (capped at a day), zero for
/// `no-store`/`no-cache`, nil when it says nothing.
enum CacheControl {
    static func maxAge(_ header: String?) -> Duration? {
        guard let header else { return nil }
        var result: Duration?
        for directive in header.split(separator: ",") {
            let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            switch parts.first {
            case "no-store", "no-cache": return .zero
            case "max-age":
                guard parts.count == 2, let seconds = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))), seconds >= 0
                else { continue }
                result = .seconds(min(seconds, 86400))
            default: continue
            }
        }
        return result
    }
}
