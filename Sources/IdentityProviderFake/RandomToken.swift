import Credentials
/// Opaque random strings for codes and tokens: unguessable enough for tests, and prefixed so a
/// log line shows which kind of thing it is.
enum RandomToken {
    static func make(prefix: String, bytes: Int = 24) -> String {
        var generator = SystemRandomNumberGenerator()
        let random = (0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return prefix + Base64URL.encode(random)
    }
}
