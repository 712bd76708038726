/// Base64url without padding (RFC 4648 section 5), as used for tokens and
/// opaque pagination cursors.
public enum Base64URL {
    /// Encodes `bytes` with the `-`/`_` alphabet and no `=` padding.
    public static func encode(_ bytes: some Collection<UInt8>) -> String {
        Base64Coder.url.encode(bytes)
    }

    /// Encodes the UTF-8 of `string`.
    public static func encode(_ string: String) -> String {
        Base64Coder.url.encode(string.utf8)
    }

    /// Decodes unpadded base64url. Returns nil for padding, characters outside
    /// the alphabet, an impossible length, or a non-canonical last symbol.
    public static func decode(_ text: some StringProtocol) -> [UInt8]? {
        Base64Coder.url.decode(text)
    }
}
