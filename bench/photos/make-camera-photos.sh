#!/usr/bin/env bash
# make-camera-photos.sh DIR: a 12-megapixel (4000×3000) photo-like scene, as a phone would
# save it: camera.jpg (Q 92, about what phones write) and camera.heic (libheif's x265, Q 50),
# each with EXIF orientation 6, a GPS position and a make and model. Smooth colour fields with
# fine grain, so that the encoders' work and the sizes resemble a photo's, not noise's.
set -euo pipefail
dir="$1"
mkdir -p "$dir"
cd "$dir"
export VIPS_CONCURRENCY=2
band() {  # band NAME SEED-SIGMA: a smooth field (coarse noise enlarged) plus grain
    vips gaussnoise "$1-coarse.v" 80 60 --sigma "$2" --mean 128 --seed "$3"
    vips resize "$1-coarse.v" "$1-smooth.v" 50 --kernel cubic
    vips gaussnoise "$1-grain.v" 4000 3000 --sigma 5 --mean 0 --seed "$3"
    vips add "$1-smooth.v" "$1-grain.v" "$1-sum.v"
    vips cast "$1-sum.v" "$1.v" uchar
}
band r 50 1
band g 40 2
band b 45 3
vips bandjoin "r.v g.v b.v" scene.v
vips copy scene.v scene-srgb.v --interpretation srgb
vips jpegsave scene-srgb.v camera.jpg --Q 92
vips heifsave scene-srgb.v camera.heic --Q 50 --compression hevc
exiftool -q -q -overwrite_original -Orientation#=6 -Make=BenchPhone -Model="BenchPhone 12" \
    -GPSLatitude=33.8568 -GPSLatitudeRef=S -GPSLongitude=151.2153 -GPSLongitudeRef=E camera.jpg camera.heic
rm -f ./*.v
