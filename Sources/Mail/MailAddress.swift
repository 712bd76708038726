/// A mailbox as SMTP's envelope and a header carry it: `local@domain`, printable ASCII.
///
/// Addresses outside ASCII need SMTPUTF8 (RFC 6531) from every relay on the way, which this
/// service does not assume: such an address is refused here, before a connection is made,
/// and the message fails for good rather than being mangled.
public struct MailAddress: Sendable, Hashable, CustomStringConvertible {
    public let address: String

    public init(_ address: String) throws {
        let scalars = address.unicodeScalars
        let at = address.lastIndex(of: "@")
        guard address.utf8.count <= 254, let at, at != address.startIndex, address.index(after: at) != address.endIndex,
            // Printable ASCII without what would end or bend the envelope's <…> or a header.
            scalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F && !"<>(),;:\\\"[]".unicodeScalars.contains($0) || $0 == "@" }),
            address[address.index(after: at)...].contains("."), address.firstIndex(of: "@") == at
        else { throw MailError.invalidAddress(address) }
        self.address = address
    }

    public var description: String { address }
    /// The domain, for a Message-ID's right-hand side.
    public var domain: Substring { address[address.index(after: address.lastIndex(of: "@")!)...] }
}
