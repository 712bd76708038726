import Credentials
import Testing

@Suite struct Base64URLTests {
    /// RFC 4648 section 10 vectors, without padding.
    @Test(arguments: [
        ("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"),
        ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"), ("foobar", "Zm9vYmFy"),
    ])
    func rfc4648Vectors(plain: String, encoded: String) {
        #expect(Base64URL.encode(plain) == encoded)
        #expect(Base64URL.decode(encoded) == Array(plain.utf8))
    }

    @Test func urlAlphabet() {
        #expect(Base64URL.encode([0xfb, 0xff, 0xbf]) == "-_-_")
        #expect(Base64URL.decode("-_-_") == [0xfb, 0xff, 0xbf])
    }

    @Test func roundTripsEveryLength() {
        for length in 0...70 {
            let bytes = Tokens.randomBytes(count: length)
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test(arguments: ["Zg==", "Zm9v=", "Z", "Zh", "Zm9", "a+b/", "ab cd", "Zm9v\n", "é"])
    func rejectsNonCanonicalInput(_ text: String) {
        #expect(Base64URL.decode(text) == nil)
    }
}
