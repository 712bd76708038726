import Credentials
import Testing

@Suite struct SecretBoxTests {
    let box = try! SecretBox(key: Tokens.randomBytes(count: 32))

    @Test func opensWhatItSealed() throws {
        let secret = Array("r1f0e2d3.apple-refresh-token".utf8)
        let sealed = box.seal(secret, binding: Array("tenant 1 apple 0001".utf8))
        #expect(sealed.count == 1 + 12 + secret.count + 16)
        #expect(!sealed.contains(subsequence: secret))
        #expect(try box.open(sealed, binding: Array("tenant 1 apple 0001".utf8)) == secret)
    }

    @Test func sealsDifferentlyEachTime() {
        let secret = Array("same".utf8)
        #expect(box.seal(secret, binding: []) != box.seal(secret, binding: []))
    }

    @Test func refusesAlteredBoxesOtherRowsAndOtherKeys() throws {
        let sealed = box.seal(Array("secret".utf8), binding: Array("row A".utf8))
        #expect(throws: SecretBox.Failure.cannotOpen) { try box.open(sealed, binding: Array("row B".utf8)) }
        var flipped = sealed
        flipped[14] ^= 1
        #expect(throws: SecretBox.Failure.cannotOpen) { try box.open(flipped, binding: Array("row A".utf8)) }
        let other = try SecretBox(key: Tokens.randomBytes(count: 32))
        #expect(throws: SecretBox.Failure.cannotOpen) { try other.open(sealed, binding: Array("row A".utf8)) }
        #expect(throws: SecretBox.Failure.cannotOpen) { try box.open([1, 2, 3], binding: []) }
        #expect(throws: SecretBox.Failure.badKey) { try SecretBox(key: [1, 2, 3]) }
    }
}

extension Array where Element == UInt8 {
    fileprivate func contains(subsequence: [UInt8]) -> Bool {
        guard subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { Array(self[$0..<($0 + subsequence.count)]) == subsequence }
    }
}
