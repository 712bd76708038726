import Credentials
import Testing

@Suite struct CommonPasswordsTests {
    @Test(arguments: ["password", "123456", "qwerty", "letmein", "iloveyou"])
    func containsCommonPasswords(_ password: String) {
        #expect(CommonPasswords.contains(password))
    }

    @Test func caseInsensitive() {
        #expect(CommonPasswords.contains("PassWord"))
        #expect(CommonPasswords.contains("QWERTY"))
    }

    @Test func doesNotContainRandomStrings() {
        #expect(!CommonPasswords.contains("xT9#qLw2@vB7!mZp4$Rk"))
        #expect(!CommonPasswords.contains(Tokens.randomToken(prefix: "")))
        #expect(!CommonPasswords.contains(""))
    }

    @Test func hasAtLeastTenThousandEntries() {
        #expect(CommonPasswords.count >= 10_000)
    }
}
