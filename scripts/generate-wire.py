#!/usr/bin/env python3
"""Generates the wire types from openapi/openapi.json, the one source of the API's JSON.

For every object the service sends (a note, a page, a problem, ...) it writes:

- the service's type: a Swift struct with one stored property per field, and its
  `write(to:)` over `JSONWriter`, keys in sorted order (the fast path `JSONWriter.swift`
  explains), into the feature folder that owns it (`HOMES` below); the code that computes
  a value builds the struct, so a field added to the contract is a compile error at that
  one place until it is given a value;
- for every body the service reads (`REQUESTS`), a reader that takes each field with its
  JSON type, range, enumeration and nullability, recording every problem by field name, on
  which the feature's validated `RequestBody` type applies the rules a schema cannot say;
- the tests' strict model of it (`Tests/LandmarkRemarkTests/Support/APIModels+Generated.swift`),
  which decodes a response as a client would and fails on a missing, mistyped or unknown field.

The generated files are committed; `--check` regenerates them in memory and fails when the
committed ones differ (`make test` runs it, before anything is built), so the code cannot
drift from the contract. Run it without arguments after changing the contract.

Rules, the same for every schema:
- the properties are declared in the contract's order, and written with their keys sorted,
  as every response has them;
- names: a field `snake_case` is the property `lowerCamelCase`, with `id` as `ID`
  (`place_id` is `placeID`); an inline object with a `title` is a type of that name
  (generated once, however many fields use it);
- a field that is required but may be null is an optional written as `null`; a field that
  is not required is an optional left out when nil; a `const` field is written, not stored;
- objects alike but for the elements of one array (`NotePage`, `PlacePage`) are one generic
  type (`Page<Item>`, named by what their names share) and an alias each;
- ids (`Id`, or strings of pattern `^[0-9]+$`) are `Int64` sent as strings; `Timestamp`
  is `Date`; `integer` is `Int`; `number` is `Double`; a string `enum` is a Swift enum.
"""

import json
import os
import re
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
CONTRACT = os.path.join(ROOT, "openapi", "openapi.json")
SERVICE = os.path.join(ROOT, "Sources", "LandmarkRemark")
TEST_MODELS = os.path.join(ROOT, "Tests", "LandmarkRemarkTests", "Support", "APIModels+Generated.swift")

# The feature folder of each type the service writes. A response schema added to the
# contract must be given a home here (or be listed in REQUESTS or ALIASES), so that no
# schema is silently left without code.
HOMES = {
    "Problem": "HTTP",
    "FieldError": "HTTP",
    "UserSummary": "Shared",
    "User": "Accounts",
    "TokenResponse": "Accounts",
    "Me": "Accounts",
    "LinkedIdentity": "Accounts",
    "PublicProfile": "Accounts",
    "StreamTicket": "Accounts",
    "EmailVerificationSent": "Accounts",
    "EmailVerified": "Accounts",
    "PasswordResetRequested": "Accounts",
    "TenantInfo": "Tenants",
    "Visibility": "Notes",
    "Note": "Notes",
    "NotePage": "Notes",
    "Cluster": "Notes",
    "ClusterList": "Notes",
    "Place": "Places",
    "PlacePage": "Places",
    "BlockPage": "Safety",
    "Report": "Safety",
    "ReportPage": "Safety",
    "ReportReason": "Safety",
    "ReportTargetType": "Safety",
    "ModerationQueueItem": "Safety",
    "ModerationQueuePage": "Safety",
    "ModerationAction": "Safety",
    "ModerationLogEntry": "Safety",
    "ModerationLogPage": "Safety",
    "Photo": "Photos",
    "PhotoVariants": "Photos",
    "PhotoVariant": "Photos",
    "DeletedEvent": "Events",
    "ResetEvent": "Events",
    "Watch": "Push",
    "WatchList": "Push",
    "DevicePlatform": "Push",
    "DeviceEnvironment": "Push",
}
# The feature folder of each body the service reads. Its generated type reads every field
# with its JSON type; the feature's `RequestBody` type builds on it with the rules a schema
# cannot say (trimming, code points, common passwords).
REQUESTS = {
    "SignupRequest": "Accounts",
    "LoginRequest": "Accounts",
    "RefreshRequest": "Accounts",
    "UpdateMeRequest": "Accounts",
    "Confirmation": "Accounts",
    "IDTokenSignInRequest": "Accounts",
    "LinkIdentityRequest": "Accounts",
    "CreateNoteRequest": "Notes",
    "CreateReportRequest": "Safety",
    "AcceptTermsRequest": "Accounts",
    "VerifyEmailRequest": "Accounts",
    "ForgotPasswordRequest": "Accounts",
    "ResetPasswordRequest": "Accounts",
    "ModerationDecisionRequest": "Safety",
    "UpdateNoteRequest": "Notes",
    "CreatePlaceRequest": "Places",
    "RenamePlaceRequest": "Places",
    "RegisterDeviceRequest": "Push",
    "CreateWatchRequest": "Push",
    "UpdateWatchRequest": "Push",
}
# Schemas the service writes as a stream, each row's JSON built by PostgreSQL (`GET
# /v1/me/export`): no service type (it would hold the whole document), only the tests' model.
STREAMED = {"AccountExport", "ExportAccount", "ExportIdentity", "ExportSession", "ExportNote", "ExportPlace",
            "ExportReport", "ExportBlock", "ExportMail", "ExportDevice", "ExportPush"}
# Schemas that are another schema under a second name (an event's `data` is the object).
ALIASES = {"NoteEvent", "PlaceEvent"}
# The element type of a generic type (`Page<Item>`): objects alike but for one array's elements.
GENERIC_ITEM = "__Item__"
# Strings with a format of their own, written as the JSON type they are.
SCALARS = {"Id", "Timestamp", "Username", "Latitude", "Longitude", "NoteBody", "PlaceName", "ProviderName"}

HEADER = "// Generated by scripts/generate-wire.py from openapi/openapi.json: do not edit.\n// Change the contract, run the script, and give the new field its value where the type is built.\n"


def camel(name):
    words = name.split("_")
    out = []
    for index, word in enumerate(words):
        if word == "id":
            out.append("id" if index == 0 else "ID")
        else:
            out.append(word if index == 0 else word[:1].upper() + word[1:])
    return "".join(out)


def pascal(name):
    text = camel(name)
    return text[:1].upper() + text[1:]


def swift_case(raw):
    name = camel(re.sub(r"[^A-Za-z0-9_]", "_", raw))
    return f"`{name}`" if name in {"public", "private", "default", "internal", "static"} else name


def doc(text, indent):
    if not text:
        return ""
    return "".join(f"{indent}/// {line}".rstrip() + "\n" for line in text.strip().splitlines())


def field_doc(contract, field, indent):
    """A field's description (its own, or the one beside its `$ref`) as a doc comment."""
    return doc(contract.unwrap(field).get("description") or field.get("description"), indent)


def stored(indent, prop, swift, required, nullable, absent, null, always):
    """One stored property, in the form for a field that may be absent, one that is required
    but may be null, or one that is always there."""
    form = absent if not required else null if nullable else always
    return indent + form.format(prop=prop, type=swift) + "\n"


class Contract:
    def __init__(self, document):
        self.schemas = document["components"]["schemas"]
        # Types to generate: name -> (schema, home). Titled inline objects join as they are met.
        self.types = {}
        overlap = set(HOMES) & set(REQUESTS)
        if overlap:
            sys.exit(f"generate-wire: a schema is both sent and read: {', '.join(sorted(overlap))}")
        unplaced = [
            name for name, schema in self.schemas.items()
            if name not in HOMES and name not in REQUESTS and name not in ALIASES and name not in SCALARS and name not in STREAMED
        ]
        if unplaced:
            sys.exit(f"generate-wire: give these schemas a home in HOMES (or list them as requests): {', '.join(unplaced)}")
        for name, home in list(HOMES.items()) + [(name, "Accounts") for name in sorted(STREAMED)]:
            if name in self.schemas:
                self.types[name] = (self.schemas[name], home)
        for name in list(self.types):
            self.collect(self.types[name][0], self.types[name][1])
        self.find_generics()
        missing = [name for name in HOMES if name not in self.types]
        if missing:
            sys.exit(f"generate-wire: HOMES names what the contract does not have: {', '.join(missing)}")

    def find_generics(self):
        """Objects that differ only in the element type of one array (`NotePage`, `PlacePage`)
        are one generic type (`Page<Item>`) and an alias for each: written once."""
        families = {}
        for name, (schema, home) in self.types.items():
            arrays = [
                field for field, value in (schema.get("properties") or {}).items()
                if self.unwrap(value).get("type") == "array" and "$ref" in self.unwrap(value)["items"]
            ]
            if len(arrays) != 1 or "enum" in schema:
                continue
            canonical = json.loads(json.dumps({k: v for k, v in schema.items() if k != "description"}))
            element = canonical["properties"][arrays[0]]
            element = element["allOf"][0] if "allOf" in element else element
            item = self.ref_name(element["items"])
            element["items"] = {"$ref": "#/components/schemas/" + GENERIC_ITEM}
            families.setdefault(json.dumps(canonical, sort_keys=True), []).append((name, home, item, canonical))
        self.generics = {}
        self.aliases = {}
        for members in families.values():
            if len(members) < 2:
                continue
            names = [name for name, _, _, _ in members]
            suffix = os.path.commonprefix([name[::-1] for name in names])[::-1]
            generic = suffix[next(i for i, c in enumerate(suffix) if c.isupper()):] if any(c.isupper() for c in suffix) else ""
            if not generic or generic in self.types:
                sys.exit(f"generate-wire: {', '.join(names)} are alike but have no common name for one generic type")
            self.generics[generic] = (members[0][3], HOMES.get(generic, "Shared"), names)
            for name, home, item, _ in members:
                self.aliases[name] = (generic, item, home)

    def resolve(self, schema):
        """The schema a field's `$ref` (through a one-element `allOf`) names, or the field's own."""
        schema = self.unwrap(schema)
        ref = self.ref_name(schema)
        return self.resolve(self.schemas[ref]) if ref else schema

    def ref_name(self, schema):
        ref = schema.get("$ref")
        return ref.rsplit("/", 1)[1] if ref else None

    def unwrap(self, schema):
        """A property's schema without the wrappers that only add a description or default."""
        all_of = schema.get("allOf")
        if all_of and len(all_of) == 1:
            return all_of[0]
        return schema

    def collect(self, schema, home):
        """Registers the titled inline objects used by `schema`, checking every use agrees."""
        for field in (schema.get("properties") or {}).values():
            field = self.unwrap(field)
            if field.get("type") == "array" or field.get("type") == ["array", "null"]:
                field = field["items"]
            title = field.get("title")
            if title and "properties" in field:
                shape = {k: v for k, v in field.items() if k not in ("description", "type", "title")}
                if title in self.types:
                    known = {k: v for k, v in self.types[title][0].items() if k not in ("description", "type", "title")}
                    if known != shape:
                        sys.exit(f"generate-wire: two different objects are titled {title}")
                else:
                    self.types[title] = (field, HOMES.get(title, home))
                    self.collect(field, home)

    def kind(self, field, owner, name):
        """(kind, detail, nullable) of one field: kind is id, timestamp, string, number,
        integer, bool, const, enum, object or array (detail is the element's kind)."""
        field = self.unwrap(field)
        types = field.get("type")
        nullable = isinstance(types, list) and "null" in types
        base = [t for t in types if t != "null"][0] if isinstance(types, list) else types
        if "const" in field:
            return ("const", field["const"], False)
        ref = self.ref_name(field)
        if ref == GENERIC_ITEM:
            return ("object", "Item", nullable)
        if ref == "Id":
            return ("id", None, nullable)
        if ref == "Timestamp":
            return ("timestamp", None, nullable)
        if ref:
            target = self.schemas[ref]
            if "enum" in target:
                return ("enum", ref, nullable)
            if target.get("type") == "object":
                return ("object", ref, nullable)
            return self.kind(target, owner, name)[:2] + (nullable,)
        if "title" in field and "properties" in field:
            return ("object", field["title"], nullable)
        if "enum" in field:
            return ("enum", f"{owner}.{pascal(name)}", nullable)
        if base == "string" and field.get("pattern") == "^[0-9]+$":
            return ("id", None, nullable)
        if base == "string" and field.get("format") == "date-time":
            return ("timestamp", None, nullable)
        if base in ("string", "number", "integer"):
            return (base, None, nullable)
        if base == "boolean":
            return ("bool", None, nullable)
        if base == "array":
            return ("array", self.kind(field["items"], owner, name), nullable)
        sys.exit(f"generate-wire: {owner}.{name} has a shape the generator does not know: {json.dumps(field)}")

    def fields(self, schema):
        """The fields in the contract's order (the order of the memberwise initialiser)."""
        required = set(schema.get("required", []))
        for name in schema.get("properties", {}):
            field = schema["properties"][name]
            yield name, field, name in required

    def inline_enums(self, name, schema):
        for field_name, field, _ in self.fields(schema):
            field = self.unwrap(field)
            if "enum" in field and "$ref" not in field:
                yield pascal(field_name), field


# MARK: - The service's types

SERVICE_TYPE = {"id": "Int64", "timestamp": "Date", "string": "String", "number": "Double", "integer": "Int", "bool": "Bool"}


def service_type(kind):
    tag, detail, _ = kind
    if tag in SERVICE_TYPE:
        return SERVICE_TYPE[tag]
    if tag in ("enum", "object"):
        return detail
    if tag == "array":
        return f"[{service_type(detail)}]"
    raise ValueError(kind)


def write_value(kind, value):
    tag, detail, _ = kind
    return {
        "id": f"json.quotedInteger({value})",
        "timestamp": f"json.timestamp({value})",
        "string": f"json.string({value})",
        "number": f"json.number({value})",
        "integer": f"json.integer(Int64({value}))",
        "bool": f"json.bool({value})",
        "enum": f"json.string({value}.rawValue)",
        "object": f"{value}.write(to: &json)",
        "array": f"json.array({value})",
    }[tag]


def service_enum(name, schema, indent):
    lines = [doc(schema.get("description"), indent), f"{indent}enum {name}: String, Sendable, Equatable, CaseIterable, JSONWritable {{\n"]
    # A nullable enumeration lists null among its values; the optional says it.
    for raw in (value for value in schema["enum"] if value is not None):
        case = swift_case(raw)
        lines.append(f"{indent}    case {case}\n" if case.strip("`") == raw else f"{indent}    case {case} = \"{raw}\"\n")
    lines.append(f"{indent}}}\n")
    return "".join(lines)


def service_struct(contract, name, schema, generic_of=None):
    declared = f"{name}<Item: JSONWritable & Sendable & Equatable>" if generic_of else name
    description = schema.get("description") or (f"The shape `{'` and `'.join(generic_of)}` share: they differ only in their items." if generic_of else None)
    out = [doc(description, ""), f"struct {declared}: JSONResponse, Equatable {{\n"]
    for enum_name, enum_schema in contract.inline_enums(name, schema):
        out.append(service_enum(enum_name, enum_schema, "    "))
        out.append("\n")
    writes = []
    for field_name, field, required in contract.fields(schema):
        kind = contract.kind(field, name, field_name)
        prop = camel(field_name)
        writes.append((field_name, prop, kind, required))
        if kind[0] == "const":
            continue
        # An enumeration of the field's own carries the field's description already.
        if not (kind[0] == "enum" and kind[1] == f"{name}.{pascal(field_name)}"):
            out.append(field_doc(contract, field, "    "))
        out.append(stored("    ", prop, service_type(kind), required, kind[2],
                          "var {prop}: {type}? = nil", "var {prop}: {type}?", "var {prop}: {type}"))
    out.append("\n    func write(to json: inout JSONWriter) {\n        json.object { json in\n")
    for field_name, prop, kind, required in sorted(writes):
        if kind[0] == "const":
            out.append(f'            json.key("{field_name}")\n            json.string("{kind[1]}")\n')
        elif not required:
            out.append(f'            if let {prop} {{\n                json.key("{field_name}")\n                {write_value(kind, prop)}\n            }}\n')
        elif kind[2]:
            out.append(f'            json.key("{field_name}")\n')
            if kind[0] in ("string", "id"):
                out.append(f"            {write_value(kind, prop)}\n")
            else:
                out.append(f"            if let {prop} {{ {write_value(kind, prop)} }} else {{ json.null() }}\n")
        else:
            out.append(f'            json.key("{field_name}")\n            {write_value(kind, prop)}\n')
    out.append("        }\n    }\n}\n")
    return "".join(out)


# MARK: - The service's readers

def read_call(contract, kind, field, field_name, required):
    """The expression that reads one field (not nullable) from `reader`."""
    tag, detail, _ = kind
    req = "" if required else ", required: false"
    if tag == "string":
        return f'reader.string("{field_name}"{req})'
    if tag == "id":
        return f'reader.id("{field_name}"{req})'
    if tag == "timestamp":
        return f'reader.timestamp("{field_name}"{req})'
    if tag == "integer":
        schema = contract.resolve(field)
        if "minimum" not in schema or "maximum" not in schema:
            sys.exit(f"generate-wire: an integer request field needs a minimum and a maximum ({field_name})")
        return f'reader.integer("{field_name}"{req}, in: {schema["minimum"]}...{schema["maximum"]})'
    if tag == "number":
        schema = contract.resolve(field)
        if "minimum" in schema and "maximum" in schema:
            return f'reader.number("{field_name}"{req}, in: {schema["minimum"]}...{schema["maximum"]})'
        return f'reader.number("{field_name}"{req})'
    if tag == "enum":
        return f'reader.enumeration("{field_name}", as: {detail}.self{req})'
    sys.exit(f"generate-wire: a request field of kind {tag} is not read yet ({field_name})")


def reader_struct(contract, name, schema, indent=""):
    out = [doc(schema.get("description"), indent)]
    out.append(f"{indent}/// Generated: each field as read with its JSON type; nil where it is absent or wrong (the\n")
    out.append(f"{indent}/// reader recorded why), and for a field that may be null, `.some(nil)` when it was null.\n")
    out.append(f"{indent}struct {name}: Sendable, Equatable {{\n")
    nested = []
    reads = []
    for field_name, field, required in contract.fields(schema):
        prop = camel(field_name)
        inner = contract.unwrap(field)
        ref = contract.ref_name(inner)
        target = contract.schemas[ref] if ref else inner
        out.append(field_doc(contract, field, indent + "    "))
        if target.get("type") == "object":
            type_name = ref or pascal(field_name)
            if not ref:
                nested.append((type_name, inner))
            out.append(f"{indent}    var {prop}: {type_name}?\n")
            req = "" if required else ", required: false"
            reads.append(
                f'{indent}        if var nested = reader.object("{field_name}"{req}) {{\n'
                f"{indent}            {prop} = {type_name}(reading: &nested)\n"
                f"{indent}            reader.absorb(nested)\n"
                f"{indent}        }} else {{\n{indent}            {prop} = nil\n{indent}        }}\n")
            continue
        kind = contract.kind(field, name, field_name)
        swift = service_type(kind)
        call = read_call(contract, kind, field, field_name, False if kind[2] else required)
        if kind[2]:
            out.append(f"{indent}    var {prop}: {swift}??\n")
            reads.append(f'{indent}        {prop} = reader.nullable("{field_name}") {{ reader in {call} }}\n')
        else:
            out.append(f"{indent}    var {prop}: {swift}?\n")
            reads.append(f"{indent}        {prop} = {call}\n")
    for type_name, nested_schema in nested:
        out.append("\n" + reader_struct(contract, type_name, nested_schema, indent + "    "))
    out.append(f"\n{indent}    init(reading reader: inout JSONObjectReader) {{\n")
    out.extend(reads)
    out.append(f"{indent}    }}\n{indent}}}\n")
    return "".join(out)


def service_files(contract):
    files = {}
    for name, (schema, home) in contract.types.items():
        if name in STREAMED:
            continue
        if name in contract.aliases:
            generic, item, _ = contract.aliases[name]
            text = doc(schema.get("description"), "") + f"typealias {name} = {generic}<{item}>\n"
        elif "enum" in schema:
            text = service_enum(name, schema, "")
        else:
            text = service_struct(contract, name, schema)
        files.setdefault(home, []).append((name, text))
    for generic, (schema, home, members) in contract.generics.items():
        files.setdefault(home, []).append((generic, service_struct(contract, generic, schema, generic_of=members)))
    for name, home in REQUESTS.items():
        files.setdefault(home, []).append((name, reader_struct(contract, name, contract.schemas[name])))
    result = {}
    for home, types in sorted(files.items()):
        body = "\n".join(text for _, text in sorted(types))
        path = os.path.join(SERVICE, home, f"{home}Wire.swift")
        result[path] = HEADER + "\nimport Foundation\n\n" + body
    return result


# MARK: - The tests' models

TEST_TYPE = {"id": "String", "timestamp": "Timestamp", "string": "String", "number": "Double", "integer": "Int", "bool": "Bool",
             "enum": "String", "const": "String"}


def test_type(kind):
    tag, detail, _ = kind
    if tag in TEST_TYPE:
        return TEST_TYPE[tag]
    if tag == "object":
        return detail
    if tag == "array":
        return f"[{test_type(detail)}]"
    raise ValueError(kind)


def test_models(contract):
    out = [HEADER, "\n// The strict models of the objects the service sends (see APIModels.swift).\nextension API {\n"]
    first = True
    models = {name: (schema, None) for name, (schema, _) in contract.types.items()}
    models.update({generic: (schema, members) for generic, (schema, _, members) in contract.generics.items()})
    for name in sorted(models):
        schema, generic_of = models[name]
        if "enum" in schema:
            continue
        if not first:
            out.append("\n")
        first = False
        if name in contract.aliases:
            generic, item, _ = contract.aliases[name]
            out.append(doc(schema.get("description"), "    ") + f"    typealias {name} = {generic}<{item}>\n")
            continue
        out.append(doc(schema.get("description"), "    "))
        out.append(f"    struct {name}<Item: APIModel>: APIModel {{\n" if generic_of else f"    struct {name}: APIModel {{\n")
        keys = []
        for field_name, field, required in contract.fields(schema):
            kind = contract.kind(field, name, field_name)
            prop = camel(field_name)
            keys.append((prop, field_name))
            out.append(field_doc(contract, field, "        "))
            out.append(stored("        ", prop, test_type(kind), required, kind[2],
                              "let {prop}: {type}?", "@Nullable var {prop}: {type}?", "let {prop}: {type}"))
        if any(prop != field_name for prop, field_name in keys):
            out.append("\n        enum CodingKeys: String, CodingKey {\n")
            for prop, field_name in keys:
                out.append(f"            case {prop}\n" if prop == field_name else f'            case {prop} = "{field_name}"\n')
            out.append("        }\n")
        out.append("    }\n")
    out.append("}\n")
    return {TEST_MODELS: "".join(out)}


def main():
    with open(CONTRACT) as handle:
        contract = Contract(json.load(handle))
    outputs = {**service_files(contract), **test_models(contract)}
    check = sys.argv[1:] == ["--check"]
    stale = []
    for path, text in sorted(outputs.items()):
        current = open(path).read() if os.path.exists(path) else None
        if current == text:
            continue
        if check:
            stale.append(os.path.relpath(path, ROOT))
        else:
            with open(path, "w") as handle:
                handle.write(text)
            print(f"wrote {os.path.relpath(path, ROOT)}")
    if stale:
        sys.exit("the wire types are out of date with openapi/openapi.json: run scripts/generate-wire.py and commit\n  "
                 + "\n  ".join(stale))
    if check:
        print(f"wire types match openapi/openapi.json ({len(contract.types)} types in {len(outputs)} files)")


if __name__ == "__main__":
    main()
