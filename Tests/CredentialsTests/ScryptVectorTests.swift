import Credentials
import Testing

/// RFC 7914 section 12 test vectors, compared byte for byte.
@Suite struct ScryptVectorTests {
    struct Vector: Sendable, CustomTestStringConvertible {
        let password: String
        let salt: String
        let n: UInt64
        let r: UInt64
        let p: UInt64
        let expected: String

        var testDescription: String { "\"\(password)\"/\"\(salt)\" N=\(n) r=\(r) p=\(p)" }
    }

    static let vectors = [
        Vector(
            password: "", salt: "", n: 16, r: 1, p: 1,
            expected: "77d6576238657b203b19ca42c18a0497f16b4844e3074ae8dfdffa3fede21442"
                + "fcd0069ded0948f8326a753a0fc81f17e8d3e0fb2e0d3628cf35e20c38d18906"),
        Vector(
            password: "password", salt: "NaCl", n: 1024, r: 8, p: 16,
            expected: "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162"
                + "2eaf30d92e22a3886ff109279d9830dac727afb94a83ee6d8360cbdfa2cc0640"),
        Vector(
            password: "pleaseletmein", salt: "SodiumChloride", n: 16384, r: 8, p: 1,
            expected: "7023bdcb3afd7348461c06cd81fd38ebfda8fbba904f8e3ea9b543f6545da1f2"
                + "d5432955613f0fcf62d49705242a9af9e61e85dc0d651e40dfcf017b45575887"),
        // N = 2^20 needs 1 GiB and a few seconds; kept because it is the one
        // vector above OpenSSL's default 32 MiB maxmem with a large N.
        Vector(
            password: "pleaseletmein", salt: "SodiumChloride", n: 1_048_576, r: 8, p: 1,
            expected: "2101cb9b6a511aaeaddbbe09cf70f881ec568d574a2ffd4dabe5ee9820adaa47"
                + "8e56fd8f4ba5d09ffa1c6d927c40f4c337304049e8a952fbcbf45c6fa77a41a4"),
    ]

    @Test(arguments: vectors)
    func rfc7914Vector(_ vector: Vector) throws {
        let key = try Scrypt.deriveKey(
            password: Array(vector.password.utf8),
            salt: Array(vector.salt.utf8),
            n: vector.n, r: vector.r, p: vector.p,
            keyLength: 64
        )
        #expect(Tokens.hex(key) == vector.expected)
    }

    @Test func rejectsNonPowerOfTwoN() {
        #expect(throws: PasswordHashError.self) {
            try Scrypt.deriveKey(password: [1], salt: [2], n: 1000, r: 8, p: 1, keyLength: 32)
        }
    }
}
