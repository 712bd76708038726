/// One bound parameter as libpq sends it: a type OID and a text or binary value.
public struct PostgresBind: Sendable, Hashable {
    public enum Value: Sendable, Hashable {
        case null
        /// Text format: PostgreSQL parses it with the type's input function.
        case text(String)
        /// Binary format, used for `bytea` so bytes need no escaping.
        case binary([UInt8])
        /// Binary format of a fixed-width value: the low `byteCount` bytes of `bits`, most
        /// significant first, which is how the server receives `int2`/`int4`/`int8`, the IEEE
        /// bits of `float4`/`float8`, `bool` (one byte) and `timestamptz` (microseconds since
        /// 2000-01-01 UTC as an `int8`). No allocation, unlike `binary`.
        case bigEndian(UInt64, byteCount: Int)
    }

    public var oid: UInt32
    public var value: Value

    public init(oid: UInt32, value: Value) {
        self.oid = oid
        self.value = value
    }
}

/// PostgreSQL type OIDs this layer encodes and decodes (from `pg_type.dat`).
public enum PostgresTypeOID {
    public static let bool: UInt32 = 16
    public static let bytea: UInt32 = 17
    public static let name: UInt32 = 19
    public static let int8: UInt32 = 20
    public static let int2: UInt32 = 21
    public static let int4: UInt32 = 23
    public static let text: UInt32 = 25
    public static let oid: UInt32 = 26
    public static let json: UInt32 = 114
    public static let float4: UInt32 = 700
    public static let float8: UInt32 = 701
    public static let unknown: UInt32 = 705
    public static let int4Array: UInt32 = 1007
    public static let textArray: UInt32 = 1009
    public static let varcharArray: UInt32 = 1015
    public static let int8Array: UInt32 = 1016
    public static let bpchar: UInt32 = 1042
    public static let varchar: UInt32 = 1043
    public static let timestamp: UInt32 = 1114
    public static let timestamptz: UInt32 = 1184
    public static let numeric: UInt32 = 1700
    public static let uuid: UInt32 = 2950
    public static let jsonb: UInt32 = 3802
}
