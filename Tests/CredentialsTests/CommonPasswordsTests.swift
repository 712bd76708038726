import Credentials
import Foundation
import Testing

@Suite struct CommonPasswordsTests {
    @Test(arguments: ["password", "123456", "qwerty", "letmein", "iloveyou"])
    func containsCommonPasswords(_ password: String) {
        #expect(CommonPasswords.contains(password))
    }

    /// The list is lowercase; a lookup in any letter case finds the entry.
    @Test(arguments: ["PassWord", "PASSWORD", "QWERTY", "qWeRtY", "Dragon", "MONKEY"])
    func caseInsensitive(_ password: String) {
        #expect(CommonPasswords.contains(password))
    }

    /// Strings that are on no list of common passwords, and near misses of listed ones.
    @Test(arguments: ["xT9#qLw2@vB7!mZp4$Rk", "password-landmark-remark-2026", "qwerty qwerty", " password"])
    func doesNotContainUncommonStrings(_ password: String) {
        #expect(!CommonPasswords.contains(password))
    }

    /// The committed list is exactly what the generator makes: regenerate it (the script
    /// downloads zxcvbn with `pip download` and checks the wheel's SHA-256) into a temporary
    /// file and compare byte for byte, and the lookup's count with the generator's.
    @Test(.timeLimit(.minutes(10))) func theCommittedListIsWhatTheGeneratorMakes() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let committed = root.appendingPathComponent("Sources/Credentials/Resources/common-passwords.txt")
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("common-passwords-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let output = directory.appendingPathComponent("common-passwords.txt")

        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", root.appendingPathComponent("scripts/generate-common-passwords.py").path, "--output", output.path]
        process.currentDirectoryURL = directory
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let log = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        try #require(
            process.terminationStatus == 0,
            "the generator failed (exit \(process.terminationStatus)); it needs python3 and `pip download` of zxcvbn 4.5.0 from PyPI or a mirror:\n\(log)")

        let generated = try Data(contentsOf: output)
        let expected = try Data(contentsOf: committed)
        #expect(generated == expected, "Sources/Credentials/Resources/common-passwords.txt differs from the generator's output; regenerate it")
        let written = log.split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("wrote ") else { return nil }
            return Int(line.split(separator: " ")[1])
        }
        #expect(written == [CommonPasswords.count], "\(log)")
    }
}
