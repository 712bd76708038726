#!/usr/bin/env bash
# make-photos.sh DIR: camera-like and hostile files for PhotosTests, made with libvips'
# tools, exiftool and a few bytes by hand. Every camera-like file is 1200×900 pixels, dark on
# its left half and bright on its right, with EXIF orientation 6 ("rotate 90° clockwise to
# show"): shown upright it is 900×1200, dark on top. And each carries what a phone leaks: GPS,
# make and model, a maker note with a serial number, an embedded thumbnail, XMP, IPTC, a
# comment. The marker SECRET-4242 is in the metadata, never in the pixels.
set -euo pipefail
dir="$1"
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$dir"
cd "$dir"
export VIPS_CONCURRENCY=1

# The scene: two halves, and a little noise so that encoders have something to encode.
vips black dark.v 600 900 --bands 3
vips linear dark.v dark2.v 1 40 --uchar
vips black light.v 600 900 --bands 3
vips linear light.v light2.v 1 220 --uchar
vips join dark2.v light2.v scene.v horizontal
vips gaussnoise noise.v 1200 900 --sigma 6 --mean 0
vips add scene.v noise.v noisy.v
vips cast noisy.v scene8.v uchar
vips jpegsave scene8.v plain.jpg --Q 92 --strip

# A maker note: exiftool writes one only inside a known make's layout, so the EXIF block
# that holds it is written here (a TIFF with IFD0 → Exif IFD → MakerNote, undefined bytes).
python3 - <<'PY'
import struct
note = b"SECRET-4242 serial 0042 owner alice lens 24-70" * 4
exif_ifd = 8 + 2 + 12 + 4
data = exif_ifd + 2 + 12 + 4
tiff = b"II*\0" + struct.pack("<I", 8)
tiff += struct.pack("<H", 1) + struct.pack("<HHII", 0x8769, 4, 1, exif_ifd) + struct.pack("<I", 0)
tiff += struct.pack("<H", 1) + struct.pack("<HHII", 0x927C, 7, len(note), data) + struct.pack("<I", 0)
tiff += note
app1 = b"Exif\0\0" + tiff
jpeg = open("plain.jpg", "rb").read()
open("camera.jpg", "wb").write(jpeg[:2] + b"\xff\xe1" + struct.pack(">H", len(app1) + 2) + app1 + jpeg[2:])
PY
vips thumbnail plain.jpg embedded-thumb.jpg 160
metadata=(
    -Orientation#=6 -Make=SECRET-4242-Make -Model="SECRET-4242 Phone"
    -GPSLatitude=33.8568 -GPSLatitudeRef=S -GPSLongitude=151.2153 -GPSLongitudeRef=E -GPSAltitude=42
    -Artist=SECRET-4242 -XMP:Creator=SECRET-4242 -XMP:Description="SECRET-4242 home"
)
exiftool -q -q -overwrite_original "${metadata[@]}" -IPTC:Keywords=SECRET-4242 -Comment=SECRET-4242 \
    "-ThumbnailImage<=embedded-thumb.jpg" camera.jpg

# The same scene in the other formats, with the same metadata written into each.
vips copy scene8.v camera.png
vips copy scene8.v camera.webp[Q=90]
vips copy scene8.v camera.heic[Q=60]
exiftool -q -q -overwrite_original "${metadata[@]}" camera.png camera.webp
exiftool -q -q -overwrite_original -Make=SECRET-4242-Make -GPSLatitude=33.8568 -GPSLatitudeRef=S \
    -XMP:Creator=SECRET-4242 camera.heic
# The HEIC as an iPhone saves a photo taken sideways: HEIF's orientation is its `irot` box
# (EXIF's tag does not count there), here 90° clockwise, so shown upright it is dark on top.
python3 "$here/add-irot.py" camera.heic camera-irot.heic 3

# A transparent PNG: its transparency is flattened on white.
vips bandjoin_const scene8.v rgba.v 0
vips copy rgba.v transparent.png

# Hostile files.
python3 - <<'PY'
import struct, zlib
def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)
# A PNG whose header declares 100,000 × 100,000 RGBA pixels (40 GB decoded), 60 bytes long.
ihdr = struct.pack(">IIBBBBB", 100000, 100000, 8, 6, 0, 0, 0)
open("bomb.png", "wb").write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"\0" * 64)) + chunk(b"IEND", b""))
jpeg = open("plain.jpg", "rb").read()
# Truncated: the first 40 % of a real JPEG.
open("truncated.jpg", "wb").write(jpeg[: len(jpeg) * 2 // 5])
# A huge EXIF block: 150 APP1 segments of 64 KB each (9.8 MB) before the image.
filler = b"Exif\0\0II*\0\x08\0\0\0" + b"\xAB" * (65533 - 2 - 14)
segment = b"\xff\xe1" + struct.pack(">H", len(filler) + 2) + filler
open("huge-exif.jpg", "wb").write(jpeg[:2] + segment * 150 + jpeg[2:])
# A polyglot: a valid JPEG with a ZIP archive after it.
archive = b"PK\x03\x04" + b"\0" * 26 + b"SECRET-4242.txt" + b"PK\x05\x06" + b"\0" * 18
open("polyglot.jpg", "wb").write(jpeg + archive)
# Text files named as photos.
open("image.svg.jpg", "wb").write(b'<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>')
open("page.html.jpg", "wb").write(b"<!DOCTYPE html><html><body><script>alert(1)</script></body></html>")
heic = bytearray(open("camera.heic", "rb").read())
# A HEIC whose meta box is garbage after its header: the ftyp still says heic.
start = heic.find(b"meta") + 8
heic[start:start + 200] = b"\xff" * 200
open("corrupt.heic", "wb").write(bytes(heic))
PY
rm -f ./*.v
