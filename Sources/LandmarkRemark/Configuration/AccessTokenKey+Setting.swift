import Foundation

extension AccessTokenKey {
    /// `LR_ACCESS_TOKEN_KEYS`: `id:key` pairs separated by commas, each id from 1 to 255 and
    /// once only, each key 32 bytes or more in base64.
    static func list(_ text: String) throws -> [AccessTokenKey] {
        func problem(_ message: String) -> ConfigurationError {
            ConfigurationError(variable: "LR_ACCESS_TOKEN_KEYS", message: message)
        }
        var keys = [AccessTokenKey]()
        for pair in text.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.trimmingCharacters(in: .whitespaces).split(separator: ":", maxSplits: 1)
            guard parts.count == 2, let id = UInt8(parts[0]), id > 0 else {
                throw problem("must be id:key pairs separated by commas, each id from 1 to 255")
            }
            guard let secret = Setting.base64(parts[1]), secret.count >= 32 else {
                throw problem("key \(id) must be 32 or more random bytes in base64 (openssl rand -base64 32)")
            }
            guard !keys.contains(where: { $0.id == id }) else { throw problem("names key \(id) twice") }
            keys.append(AccessTokenKey(id: id, secret: secret))
        }
        return keys
    }
}
