import CLibPQ

/// The rows a statement returned, copied out of libpq's `PGresult` so the C
/// result never escapes the call that produced it.
///
/// All cells live in one byte buffer with offsets, which costs one allocation
/// per result instead of one per cell.
public struct PostgresRows: Sendable, RandomAccessCollection {
    public struct Column: Sendable {
        public let name: String
        public let oid: UInt32
        /// Binary for the extended protocol's results (`query`), text for the simple
        /// protocol's (`execute(unsafeSQL:)`).
        public let format: PostgresCell.Format
    }

    public let columns: [Column]
    /// Number of rows a command touched (`INSERT`, `UPDATE`, `DELETE`), or returned.
    public let affectedRows: Int
    @usableFromInline let storage: [UInt8]
    /// For row r and column c, `offsets[r * columns.count + c]`: start and length, length -1 for NULL.
    @usableFromInline let offsets: [(start: Int, length: Int)]
    let rowCount: Int

    public var startIndex: Int { 0 }
    public var endIndex: Int { rowCount }
    public subscript(position: Int) -> PostgresRow { PostgresRow(rows: self, index: position) }

    init(result: OpaquePointer) {
        let rowCount = Int(PQntuples(result))
        let columnCount = Int(PQnfields(result))
        var columns = [Column]()
        columns.reserveCapacity(columnCount)
        for column in 0..<columnCount {
            columns.append(Column(
                name: String(cString: PQfname(result, Int32(column))), oid: PQftype(result, Int32(column)),
                format: PQfformat(result, Int32(column)) == 1 ? .binary : .text))
        }
        var total = 0
        for row in 0..<rowCount {
            for column in 0..<columnCount { total += Int(PQgetlength(result, Int32(row), Int32(column))) }
        }
        var storage = [UInt8]()
        storage.reserveCapacity(total)
        var offsets = [(start: Int, length: Int)]()
        offsets.reserveCapacity(rowCount * columnCount)
        for row in 0..<rowCount {
            for column in 0..<columnCount {
                if PQgetisnull(result, Int32(row), Int32(column)) == 1 {
                    offsets.append((storage.count, -1))
                    continue
                }
                let length = Int(PQgetlength(result, Int32(row), Int32(column)))
                let start = storage.count
                if let value = PQgetvalue(result, Int32(row), Int32(column)) {
                    value.withMemoryRebound(to: UInt8.self, capacity: length) {
                        storage.append(contentsOf: UnsafeBufferPointer(start: $0, count: length))
                    }
                }
                offsets.append((start, length))
            }
        }
        self.columns = columns
        self.storage = storage
        self.offsets = offsets
        self.rowCount = rowCount
        let tuples = String(cString: PQcmdTuples(result))
        self.affectedRows = Int(tuples) ?? rowCount
    }
}

/// One row of a result; decode its columns by position into a tuple.
///
/// The decoding methods are `@inlinable` so they are specialized for the caller's
/// types: unspecialized, every cell paid for runtime generic metadata (and every
/// tuple for its pack's), which the benchmark's profile showed.
public struct PostgresRow: Sendable {
    @usableFromInline let rows: PostgresRows
    @usableFromInline let index: Int

    public var columns: [PostgresRows.Column] { rows.columns }

    /// Decodes column `column` into `type`; a mismatch names the column.
    @inlinable
    public func decode<Value: PostgresDecodable>(_ type: Value.Type, column: Int) throws -> Value {
        guard column < rows.columns.count else { throw missingColumn(column) }
        let info = rows.columns[column]
        let slot = rows.offsets[index * rows.columns.count + column]
        let decoded: Value? = rows.storage.withUnsafeBytes { buffer in
            if slot.length < 0 {
                return Value.acceptsNull ? Value.decode(PostgresCell(oid: info.oid, format: info.format, bytes: nil)) : nil
            }
            let bytes = UnsafeRawBufferPointer(rebasing: buffer[slot.start..<(slot.start + slot.length)])
            return Value.decode(PostgresCell(oid: info.oid, format: info.format, bytes: bytes))
        }
        guard let decoded else { throw mismatch(column, isNull: slot.length < 0, as: Value.self) }
        return decoded
    }

    @usableFromInline func missingColumn(_ column: Int) -> PostgresError {
        PostgresError(kind: .decoding, message: "row has \(rows.columns.count) columns, no column \(column)")
    }

    @usableFromInline func mismatch(_ column: Int, isNull: Bool, as type: Any.Type) -> PostgresError {
        let info = rows.columns[column]
        let what = isNull ? "NULL" : "\(info.format) type OID \(info.oid)"
        return PostgresError(
            kind: .decoding,
            message: "column \"\(info.name)\" (index \(column)): cannot decode \(what) as \(type)"
                + (isNull ? "" : ": a type or format it does not read, or a value it cannot hold (infinity, out of range)"),
            columnName: info.name
        )
    }

    /// Decodes the whole row into a tuple, column by column:
    /// `let (id, name) = try row.decode((Int64, String).self)`.
    @inlinable
    public func decode<each Value: PostgresDecodable>(_ types: (repeat each Value).Type) throws -> (repeat each Value) {
        var column = 0
        func next<V: PostgresDecodable>(_ type: V.Type) throws -> V {
            defer { column += 1 }
            return try decode(V.self, column: column)
        }
        return (repeat try next((each Value).self))
    }
}
