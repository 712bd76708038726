/// A script of SQL statements split into its statements, as psql splits a file: at each `;`
/// outside quotes, dollar quotes and comments.
///
/// The migrator runs a file's statements one by one (in one transaction). Sent as one
/// multi-statement query, Citus propagated some DDL on a distributed table (`CREATE INDEX`) to
/// the workers as a prepared statement of the whole text, which the workers refuse ("cannot
/// insert multiple commands into a prepared statement"), so a migration could not change a
/// distributed schema. One at a time, it can; and an error names its statement.
enum SQLScript {
    static func statements(_ script: String) -> [String] {
        let text = Array(script.unicodeScalars)
        var statements: [String] = []
        var start = 0
        var index = 0

        func isIdentifier(_ scalar: Unicode.Scalar) -> Bool {
            scalar == "_" || scalar.properties.isAlphabetic || ("0"..."9").contains(scalar)
        }
        func finish(at end: Int) {
            let statement = String(String.UnicodeScalarView(text[start..<end])).trimmingWhitespace()
            if !statement.isEmpty && !Self.isOnlyComments(statement) { statements.append(statement) }
        }

        while index < text.count {
            let scalar = text[index]
            let next: Unicode.Scalar? = index + 1 < text.count ? text[index + 1] : nil
            switch scalar {
            case "-" where next == "-":
                while index < text.count && text[index] != "\n" { index += 1 }
            case "/" where next == "*":
                // Block comments nest in PostgreSQL.
                var depth = 0
                repeat {
                    if text[index] == "/" && index + 1 < text.count && text[index + 1] == "*" { depth += 1; index += 2 }
                    else if text[index] == "*" && index + 1 < text.count && text[index + 1] == "/" { depth -= 1; index += 2 }
                    else { index += 1 }
                } while depth > 0 && index < text.count
            case "'":
                // E'…' takes backslash escapes; every string takes '' for a quote.
                let escapes = index > 0 && (text[index - 1] == "E" || text[index - 1] == "e")
                    && (index < 2 || !isIdentifier(text[index - 2]))
                index += 1
                while index < text.count {
                    if escapes && text[index] == "\\" { index += 2; continue }
                    if text[index] == "'" {
                        if index + 1 < text.count && text[index + 1] == "'" { index += 2; continue }
                        break
                    }
                    index += 1
                }
                index += 1
            case "\"":
                index += 1
                while index < text.count {
                    if text[index] == "\"" {
                        if index + 1 < text.count && text[index + 1] == "\"" { index += 2; continue }
                        break
                    }
                    index += 1
                }
                index += 1
            case "$" where index == 0 || !isIdentifier(text[index - 1]):
                // $tag$ … $tag$ (the tag may be empty, and does not start with a digit: $1 is a parameter).
                var end = index + 1
                while end < text.count && text[end] != "$" && isIdentifier(text[end]) { end += 1 }
                let tagIsValid = end < text.count && text[end] == "$"
                    && (end == index + 1 || !("0"..."9").contains(text[index + 1]))
                guard tagIsValid else { index += 1; continue }
                let tag = Array(text[index...end])
                index = end + 1
                while index < text.count {
                    if text[index] == "$" && index + tag.count <= text.count && Array(text[index..<(index + tag.count)]) == tag {
                        index += tag.count
                        break
                    }
                    index += 1
                }
            case ";":
                finish(at: index)
                index += 1
                start = index
            default:
                index += 1
            }
        }
        finish(at: min(index, text.count))
        return statements
    }

    /// Whether text holds nothing but comments and white space (the end of a file).
    private static func isOnlyComments(_ text: String) -> Bool {
        text.split(separator: "\n").allSatisfy { line in
            let trimmed = line.trimmingWhitespaceSubstring()
            return trimmed.isEmpty || trimmed.hasPrefix("--")
        }
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> String {
        String(trimmingWhitespaceSubstring())
    }

    fileprivate func trimmingWhitespaceSubstring() -> Substring {
        self[...].trimmingWhitespaceSubstring()
    }
}

extension Substring {
    fileprivate func trimmingWhitespaceSubstring() -> Substring {
        var result = self
        while let first = result.first, first.isWhitespace { result.removeFirst() }
        while let last = result.last, last.isWhitespace { result.removeLast() }
        return result
    }
}
