#!/usr/bin/env python3
"""add-irot.py IN OUT ANGLE: a copy of a HEIF file whose primary image carries an `irot`
property (rotation by ANGLE × 90° anticlockwise), as an iPhone writes a photo taken
sideways: HEIF's orientation is this box, not EXIF's tag, and decoders apply it.

libvips writes no `irot`, and libheif's own encoder tool is not a package this project
uses, so the box is added here: one more property in `ipco`, associated with the primary
item in `ipma` (essential, as ISO/IEC 23008-12 asks of transformations), the enclosing
boxes' sizes grown to match, and every `iloc` offset into what follows `meta` moved past
the bytes added."""
import struct
import sys


def child_boxes(data, start, end):
    """(type, offset, size) of each box between start and end."""
    found, offset = [], start
    while offset < end:
        size, kind = struct.unpack(">I4s", data[offset:offset + 8])
        found.append((kind, offset, size))
        offset += size
    return found


def find(data, start, end, kind):
    return next(box for box in child_boxes(data, start, end) if box[0] == kind)


def main(source, target, angle):
    data = bytearray(open(source, "rb").read())
    _, meta, meta_size = find(data, 0, len(data), b"meta")
    inside = (meta + 12, meta + meta_size)  # meta is a full box: version and flags first
    _, pitm, _ = find(data, *inside, b"pitm")
    primary = struct.unpack(">H", data[pitm + 12:pitm + 14])[0]
    _, iprp, iprp_size = find(data, *inside, b"iprp")
    _, ipco, ipco_size = find(data, iprp + 8, iprp + iprp_size, b"ipco")
    _, ipma, ipma_size = find(data, iprp + 8, iprp + iprp_size, b"ipma")
    property_index = len(child_boxes(data, ipco + 8, ipco + ipco_size)) + 1
    irot = struct.pack(">I4sB", 9, b"irot", angle & 3)

    # ipma: version/flags, entry count, then per item: id, count, associations.
    version, flags = data[ipma + 8], int.from_bytes(data[ipma + 9:ipma + 12], "big")
    id_size, wide = (4 if version >= 1 else 2), bool(flags & 1)
    cursor = ipma + 16
    entries = struct.unpack(">I", data[ipma + 12:ipma + 16])[0]
    insert_at = None
    for _ in range(entries):
        item = int.from_bytes(data[cursor:cursor + id_size], "big")
        count_at = cursor + id_size
        count = data[count_at]
        end = count_at + 1 + count * (2 if wide else 1)
        if item == primary:
            data[count_at] = count + 1
            insert_at = end
        cursor = end
    assert insert_at is not None, "the primary item has no properties"
    association = struct.pack(">H", 0x8000 | property_index) if wide else bytes([0x80 | property_index])
    assert wide or property_index < 128

    added = len(irot) + len(association)
    meta_end = meta + meta_size  # before the insertion: what lies beyond it moves by `added`
    data[insert_at:insert_at] = association
    data[ipco + ipco_size:ipco + ipco_size] = irot  # ipco precedes ipma: insert_at is unaffected
    for box, size in ((ipma, ipma_size + len(association)), (ipco, ipco_size + len(irot)),
                      (iprp, iprp_size + added), (meta, meta_size + added)):
        if box == ipma:
            box += len(irot)
        data[box:box + 4] = struct.pack(">I", size)

    # iloc: every extent's offset (construction method 0: from the file's start) moves.
    _, iloc, _ = find(data, meta + 12, meta + meta_size + added, b"iloc")
    version = data[iloc + 8]
    sizes = data[iloc + 12], data[iloc + 13]
    offset_size, length_size = sizes[0] >> 4, sizes[0] & 15
    base_size, index_size = sizes[1] >> 4, (sizes[1] & 15 if version in (1, 2) else 0)
    cursor = iloc + 14
    count_size = 2 if version < 2 else 4
    items = int.from_bytes(data[cursor:cursor + count_size], "big")
    cursor += count_size
    for _ in range(items):
        cursor += 2 if version < 2 else 4
        method = 0
        if version in (1, 2):
            method = int.from_bytes(data[cursor:cursor + 2], "big") & 15
            cursor += 2
        cursor += 2  # data reference index
        base = int.from_bytes(data[cursor:cursor + base_size], "big") if base_size else 0
        if method == 0 and base_size and base >= meta_end:
            data[cursor:cursor + base_size] = (base + added).to_bytes(base_size, "big")
        cursor += base_size
        extents = int.from_bytes(data[cursor:cursor + 2], "big")
        cursor += 2
        for _ in range(extents):
            cursor += index_size
            value = int.from_bytes(data[cursor:cursor + offset_size], "big")
            if method == 0 and not base_size and value >= meta_end:
                data[cursor:cursor + offset_size] = (value + added).to_bytes(offset_size, "big")
            cursor += offset_size + length_size
    open(target, "wb").write(bytes(data))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
