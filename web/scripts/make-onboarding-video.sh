#!/usr/bin/env bash
# Regenerates the default onboarding video and its captions (web/public/onboarding/).
# Needs ffmpeg and espeak-ng (Debian: apt-get install ffmpeg espeak-ng). The output is committed,
# so nobody needs to run this to use the portal; events replace the video with ONBOARDING_VIDEO_URL.
set -euo pipefail
cd "$(dirname "$0")/.."
out=public/onboarding
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$out"

slides=(
  "Welcome, informant.|Thank you for joining the investigation."
  "On your appointment date, stand at the street corner|named on your home page and wait for our call."
  "Charge your phone and bring wired headphones.|In bad weather, wait in the library entryway."
  "Use the menu at the top right to move around|and to upload notes, photos, video and sound."
  "You can watch this video again under Help.|Good luck."
)

font=/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf
vtt="$out/onboarding.en.vtt"
echo "WEBVTT" > "$vtt"
echo >> "$vtt"
start=0
list="$work/list.txt"
: > "$list"
fmt() { printf '%02d:%02d:%02d.%03d' $(($1/3600000)) $(($1/60000%60)) $(($1/1000%60)) $(($1%1000)); }
for i in "${!slides[@]}"; do
  IFS='|' read -r line1 line2 <<< "${slides[$i]}"
  espeak-ng -s 150 -w "$work/voice$i.wav" "$line1 $line2"
  dur_ms=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$work/voice$i.wav" | awk '{printf "%d", ($1+0.8)*1000}')
  dur=$(awk "BEGIN{printf \"%.3f\", $dur_ms/1000}")
  ffmpeg -v error -y -f lavfi -i "color=c=0x1b1f2a:s=640x360:r=25:d=$dur" -i "$work/voice$i.wav" \
    -filter_complex "[0:v]drawtext=fontfile=$font:text='$((i+1)) / ${#slides[@]}':x=20:y=20:fontsize=18:fontcolor=0xb0b8c8,drawtext=fontfile=$font:text='${line1//:/\\:}':x=(w-text_w)/2:y=h/2-30:fontsize=20:fontcolor=white,drawtext=fontfile=$font:text='${line2//:/\\:}':x=(w-text_w)/2:y=h/2+10:fontsize=20:fontcolor=white[v];[1:a]apad=whole_dur=$dur,aresample=48000[a]" \
    -map "[v]" -map "[a]" -t "$dur" -c:v libx264 -pix_fmt yuv420p -preset veryslow -crf 30 -c:a aac -b:a 48k -ac 1 "$work/slide$i.mp4"
  echo "file '$work/slide$i.mp4'" >> "$list"
  end=$((start + dur_ms))
  printf '%s --> %s\n%s\n%s\n\n' "$(fmt $start)" "$(fmt $end)" "$line1" "$line2" >> "$vtt"
  start=$end
done
ffmpeg -v error -y -f concat -safe 0 -i "$list" -c copy -movflags +faststart "$out/onboarding.mp4"
ffmpeg -v error -y -i "$out/onboarding.mp4" -c:v libvpx-vp9 -b:v 0 -crf 45 -row-mt 1 -c:a libopus -b:a 32k "$out/onboarding.webm"
ls -l "$out"
