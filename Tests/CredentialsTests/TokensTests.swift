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

    @Test func tenantTokenShape() {
        for tenantID: Int64 in [1, 42, 1_000_000, .max] {
            let token = Tokens.tenantToken(prefix: "lr_at_", tenantID: tenantID)
            #expect(token.hasPrefix("lr_at_\(tenantID)_"))
            #expect(token.count == "lr_at_\(tenantID)_".count + 43)
            #expect(Base64URL.decode(token.suffix(43))?.count == 32)
            #expect(Tokens.tenantPart(of: token, prefix: "lr_at_") == .tenant(tenantID))
            // Another kind's prefix does not take it.
            #expect(Tokens.tenantPart(of: token, prefix: "lr_rt_") == nil)
        }
        let twice = (0..<100).map { _ in Tokens.tenantToken(prefix: "lr_st_", tenantID: 7) }
        #expect(Set(twice).count == twice.count)
        // The longest fits the 128 bytes the service reads.
        #expect(Tokens.tenantToken(prefix: "lr_rt_", tenantID: .max).utf8.count == 6 + 19 + 1 + 43)
    }

    @Test func legacyTokensAreExactly43CharactersAfterThePrefix() {
        let random = String(repeating: "A", count: 43)
        #expect(Tokens.tenantPart(of: "lr_at_" + random, prefix: "lr_at_") == .legacy)
        #expect(Tokens.tenantPart(of: Tokens.randomToken(prefix: "lr_rt_"), prefix: "lr_rt_") == .legacy)
        // Digits and `_` are base64url too: 43 characters are legacy whatever they start with.
        #expect(Tokens.tenantPart(of: "lr_at_12_" + String(repeating: "x", count: 40), prefix: "lr_at_") == .legacy)
        // A substring parses like the string.
        #expect(Tokens.tenantPart(of: "Bearer lr_at_5_\(random)".dropFirst(7), prefix: "lr_at_") == .tenant(5))
    }

    @Test func malformedTokensHaveNoTenantPart() {
        let random = String(repeating: "b", count: 43)
        let malformed = [
            "", "lr_at_", "lr_at_x", "lr_at_" + String(random.dropLast()), "lr_at_" + random + "c",
            "lr_rt_1_" + random, "LR_AT_1_" + random, "xlr_at_1_" + random,
            // Tenant ids: none, zero, a leading zero, a sign, not digits, beyond Int64.
            "lr_at__" + random, "lr_at_0_" + random, "lr_at_01_" + random, "lr_at_007_" + random,
            "lr_at_+1_" + random, "lr_at_-1_" + random, "lr_at_1a_" + random, "lr_at_ 1_" + random,
            "lr_at_\u{0663}_" + random, "lr_at_9223372036854775808_" + random, "lr_at_99999999999999999999_" + random,
            // No `_` between the tenant and the random part, or one too many.
            "lr_at_1" + random, "lr_at_1__" + random, "lr_at_1_2_" + random,
            // The random part outside base64url.
            "lr_at_1_" + String(random.dropLast()) + "=", "lr_at_1_" + String(random.dropLast()) + "+",
            "lr_at_1_" + String(random.dropLast()) + "é", "lr_at_" + String(random.dropLast()) + "/",
        ]
        for token in malformed {
            #expect(Tokens.tenantPart(of: token, prefix: "lr_at_") == nil, "\(token)")
        }
        #expect(Tokens.tenantPart(of: "lr_at_9223372036854775807_" + random, prefix: "lr_at_") == .tenant(.max))
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

@Suite struct HMACTests {
    /// RFC 4231 test cases 1, 2 ("Jefe"), 6 and 7 (keys longer than the block, hashed first);
    /// and a different message gives a different digest.
    @Test func matchesTheRFCVectors() {
        let first = Tokens.hmacSHA256(key: [UInt8](repeating: 0x0b, count: 20), message: Array("Hi There".utf8))
        #expect(Tokens.hex(first) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
        let jefe = Tokens.hmacSHA256(key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
        #expect(Tokens.hex(jefe) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
        let longKey = [UInt8](repeating: 0xaa, count: 131)
        let sixth = Tokens.hmacSHA256(key: longKey, message: Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8))
        #expect(Tokens.hex(sixth) == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54")
        let seventh = Tokens.hmacSHA256(key: longKey, message: Array((
            "This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed "
            + "before being used by the HMAC algorithm.").utf8))
        #expect(Tokens.hex(seventh) == "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2")
        // A key of exactly one block is used as it is.
        let block = Tokens.hmacSHA256(key: [UInt8](repeating: 0x01, count: 64), message: [])
        #expect(block != Tokens.hmacSHA256(key: Tokens.sha256([UInt8](repeating: 0x01, count: 64)), message: []))
        #expect(Tokens.hmacSHA256(key: [1], message: [2]) != Tokens.hmacSHA256(key: [1], message: [3]))
    }
}
