import Credentials
import Testing

@Suite struct TokensTests {
    @Test func randomTokenShape() {
        let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let tokens = (0..<200).map { _ in Tokens.randomToken(prefix: "lr_at_") }
        for token in tokens {
            #expect(token.hasPrefix("lr_at_"))
            let body = token.dropFirst("lr_at_".count)
            #expect(body.count == 43)  // 32 bytes, unpadded base64url
            #expect(body.allSatisfy { alphabet.contains($0) })
            #expect(Base64URL.decode(body)?.count == 32)
        }
        #expect(Set(tokens).count == tokens.count)
        #expect(Tokens.randomToken(prefix: "lr_rt_").hasPrefix("lr_rt_"))
    }

    @Test func randomBytes() {
        #expect(Tokens.randomBytes(count: 0).isEmpty)
        #expect(Tokens.randomBytes(count: 16).count == 16)
        #expect(Tokens.randomBytes(count: 32) != Tokens.randomBytes(count: 32))
    }

    @Test func sha256KnownVectors() {
        #expect(Tokens.hex(Tokens.sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(Tokens.hex(Tokens.sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(Tokens.sha256(Array("abc".utf8)) == Tokens.sha256("abc"))
        #expect(
            Tokens.hex(Tokens.sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"))
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    }

    @Test func hex() {
        #expect(Tokens.hex([]) == "")
        #expect(Tokens.hex([0x00, 0x0f, 0xa5, 0xff]) == "000fa5ff")
    }

    @Test func constantTimeEquals() {
        #expect(Tokens.constantTimeEquals([], []))
        #expect(Tokens.constantTimeEquals([1, 2, 3], [1, 2, 3]))
        #expect(!Tokens.constantTimeEquals([1, 2, 3], [1, 2, 4]))
        #expect(!Tokens.constantTimeEquals([1, 2, 3], [1, 2]))
        #expect(!Tokens.constantTimeEquals([], [0]))
        let digest = Tokens.sha256("token")
        #expect(Tokens.constantTimeEquals(digest, Tokens.sha256("token")))
        #expect(!Tokens.constantTimeEquals(digest, Tokens.sha256("tokeN")))
    }
}
