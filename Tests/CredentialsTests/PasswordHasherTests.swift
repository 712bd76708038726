import Credentials
import Testing

/// Cheap parameters so the suite stays fast; the format is the same.
let testParameters = ScryptParameters(logN: 10, r: 8, p: 1)

private func hashError(_ body: () throws -> Void) -> PasswordHashError? {
    do {
        try body()
        return nil
    } catch let error as PasswordHashError {
        return error
    } catch {
        return nil
    }
}

@Suite struct PasswordHasherTests {
    @Test func roundTrip() throws {
        let encoded = try PasswordHasher.hash(password: "correct horse battery staple", parameters: testParameters)
        #expect(try PasswordHasher.verify(password: "correct horse battery staple", against: encoded))
        #expect(try !PasswordHasher.verify(password: "correct horse battery stapl", against: encoded))
        #expect(try !PasswordHasher.verify(password: "Correct horse battery staple", against: encoded))
        #expect(try !PasswordHasher.verify(password: "", against: encoded))
    }

    @Test func encodedFormat() throws {
        let encoded = try PasswordHasher.hash(password: "hunter2hunter2", parameters: testParameters)
        let fields = encoded.split(separator: "$", omittingEmptySubsequences: false)
        #expect(fields.count == 5)
        #expect(encoded.hasPrefix("$scrypt$ln=10,r=8,p=1$"))
        #expect(fields[3].count == 22)  // 16 bytes, unpadded
        #expect(fields[4].count == 43)  // 32 bytes, unpadded
        #expect(!fields[3].contains("=") && !fields[4].contains("="))

        let parsed = try PasswordHash(encoded: encoded)
        #expect(parsed.parameters == testParameters)
        #expect(parsed.salt.count == 16 && parsed.hash.count == 32)
        #expect(parsed.encoded == encoded)
    }

    @Test func defaultParametersAreOWASP() {
        let defaults = ScryptParameters.owaspDefault
        #expect(defaults.n == 131_072 && defaults.r == 8 && defaults.p == 1)
        #expect(defaults.keyLength == 32 && defaults.saltLength == 16)
        #expect(throws: Never.self) { try defaults.validate() }
    }

    /// Ties the string format to an RFC 7914 vector: its salt and key, wrapped
    /// in the format, must verify.
    @Test func knownAnswerThroughFormat() throws {
        let key = try Scrypt.deriveKey(
            password: Array("pleaseletmein".utf8), salt: Array("SodiumChloride".utf8),
            n: 16384, r: 8, p: 1, keyLength: 64)
        let stored = PasswordHash(
            parameters: ScryptParameters(logN: 14, r: 8, p: 1),
            salt: Array("SodiumChloride".utf8),
            hash: key)
        #expect(stored.encoded.hasPrefix("$scrypt$ln=14,r=8,p=1$U29kaXVtQ2hsb3JpZGU$cCO9yzr9c0hGHAbNgf04"))
        #expect(try PasswordHasher.verify(password: "pleaseletmein", against: stored.encoded))
        #expect(try !PasswordHasher.verify(password: "pleaseletmeout", against: stored.encoded))
    }

    @Test func unicodePasswordsAreUsedAsGivenUTF8() throws {
        let password = "pässwörd 🔐🏳️‍🌈 e\u{301}"  // emoji, ZWJ sequence, combining acute
        let encoded = try PasswordHasher.hash(password: password, parameters: testParameters)
        #expect(try PasswordHasher.verify(password: password, against: encoded))
        // No normalisation: the precomposed é is a different byte string.
        #expect(try !PasswordHasher.verify(password: "pässwörd 🔐🏳️‍🌈 \u{E9}", against: encoded))
        // No truncation: a long password differs from its prefix.
        let long = String(repeating: "ab", count: 200)
        let longEncoded = try PasswordHasher.hash(password: long, parameters: testParameters)
        #expect(try PasswordHasher.verify(password: long, against: longEncoded))
        #expect(try !PasswordHasher.verify(password: String(long.prefix(128)), against: longEncoded))
    }

    @Test func freshSaltEachTime() throws {
        let hashes = try (0..<5).map { _ in try PasswordHasher.hash(password: "same", parameters: testParameters) }
        #expect(Set(hashes).count == 5)
        for encoded in hashes { #expect(try PasswordHasher.verify(password: "same", against: encoded)) }
    }

    static let malformed = [
        "",
        "plaintext",
        "$scrypt$",
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA",
        "scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$argon2id$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$r=8,ln=10,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=010,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=+10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=ten,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=99999999999999999999,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA==$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1$c2FsdH*hbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA$",
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAB",  // non-canonical
    ]

    @Test(arguments: malformed)
    func malformedStoredStringThrows(_ encoded: String) {
        guard case .malformed = hashError({ _ = try PasswordHash(encoded: encoded) }) else {
            Issue.record("expected .malformed for \(encoded)")
            return
        }
        #expect(throws: PasswordHashError.self) { try PasswordHasher.verify(password: "x", against: encoded) }
    }

    static let absurd = [
        "$scrypt$ln=25,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // 2^25
        "$scrypt$ln=24,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // 16 GiB
        "$scrypt$ln=0,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=9999,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=8,p=9999$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=10,r=0,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "$scrypt$ln=20,r=32,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // 4 GiB
        "$scrypt$ln=18,r=8,p=16$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // work 2^25
        "$scrypt$ln=10,r=8,p=1$c2FsdA$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // 4-byte salt
        "$scrypt$ln=10,r=8,p=1$c2FsdHNhbHRzYWx0c2FsdA$AAAAAAAA",  // 6-byte key
        "$scrypt$ln=10,r=8,p=1$$AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",  // empty salt
    ]

    @Test(arguments: absurd)
    func absurdParametersAreRejected(_ encoded: String) {
        guard case .unsupportedParameters = hashError({ _ = try PasswordHash(encoded: encoded) }) else {
            Issue.record("expected .unsupportedParameters for \(encoded)")
            return
        }
        #expect(throws: PasswordHashError.self) { try PasswordHasher.verify(password: "x", against: encoded) }
    }

    @Test func hashRejectsAbsurdParameters() {
        #expect(throws: PasswordHashError.self) {
            try PasswordHasher.hash(password: "x", parameters: ScryptParameters(logN: 30, r: 8, p: 1))
        }
        #expect(throws: PasswordHashError.self) {
            try PasswordHasher.hash(password: "x", parameters: ScryptParameters(logN: 10, r: 8, p: 1, saltLength: 0))
        }
    }

    @Test(arguments: [
        ScryptParameters(logN: -1, r: 8, p: 1),
        ScryptParameters(logN: 200, r: 8, p: 1),
        ScryptParameters(logN: 10, r: .max, p: 1),
        ScryptParameters(logN: 10, r: -8, p: 1),
        ScryptParameters(logN: 10, r: 8, p: .max),
        ScryptParameters(logN: 10, r: 8, p: 1, keyLength: 8),
        ScryptParameters(logN: 10, r: 8, p: 1, keyLength: 1 << 40),
    ])
    func outOfRangeParametersThrowWithoutTrapping(_ parameters: ScryptParameters) {
        _ = parameters.n
        _ = parameters.memoryBytes
        #expect(throws: PasswordHashError.self) { try parameters.validate() }
    }

    @Test func needsRehash() throws {
        let encoded = try PasswordHasher.hash(password: "pw", parameters: testParameters)
        #expect(!PasswordHasher.needsRehash(encoded, target: testParameters))
        #expect(!PasswordHasher.needsRehash(encoded, target: ScryptParameters(logN: 9, r: 4, p: 1)))
        #expect(PasswordHasher.needsRehash(encoded, target: ScryptParameters(logN: 11, r: 8, p: 1)))
        #expect(PasswordHasher.needsRehash(encoded, target: ScryptParameters(logN: 10, r: 9, p: 1)))
        #expect(PasswordHasher.needsRehash(encoded, target: ScryptParameters(logN: 10, r: 8, p: 2)))
        #expect(PasswordHasher.needsRehash(encoded, target: ScryptParameters(logN: 10, r: 8, p: 1, keyLength: 64)))
        #expect(PasswordHasher.needsRehash(encoded, target: .owaspDefault))
        #expect(PasswordHasher.needsRehash("garbage", target: testParameters))
    }
}
