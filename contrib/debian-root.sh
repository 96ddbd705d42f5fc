# Sourced, not run: a fresh minimal Debian root in a scratch folder, for contrib/check-deb-root
# and contrib/check-debian13. Set `root` (its folder) before calling; needs root.
#   root_create RELEASE LOG    debootstrap RELEASE into $root, apt sources, /proc /sys /dev bound
#   root_bind_ro TREE...       each TREE bound read-only at its own path inside (nested ones once)
#   inside CMD...              CMD in the root with an empty environment
# On exit every mount is undone, in reverse, and the root removed (never with a mount left).
root_mounts=()
root_mirror=${DEBIAN_MIRROR:-http://deb.debian.org/debian}

root_remove() {
  if grep -q " $root/" /proc/mounts; then
    echo "debian-root: $root still has mounts; not removed"
    return 1
  fi
  rm -rf "$root"
}
root_cleanup() {
  for ((i = ${#root_mounts[@]} - 1; i >= 0; i--)); do
    umount "${root_mounts[i]}" 2>/dev/null || umount -l "${root_mounts[i]}"
  done
  root_mounts=()
  root_remove
}
root_mount() {  # what, where (inside root), options
  mkdir -p "$root$2"
  mount "${@:3}" "$1" "$root$2"
  root_mounts+=("$root$2")
}
root_create() {
  local release=$1 log=$2
  root_remove
  trap root_cleanup EXIT
  command -v debootstrap >/dev/null || apt-get install -y -q --no-install-recommends debootstrap >/dev/null
  echo "debian-root: debootstrap $release into $root"
  debootstrap --variant=minbase "$release" "$root" "$root_mirror" >"$log" 2>&1 || { tail -20 "$log"; return 1; }
  cat >"$root/etc/apt/sources.list" <<SOURCES
deb $root_mirror $release main
deb $root_mirror $release-updates main
deb http://deb.debian.org/debian-security $release-security main
SOURCES
  cp /etc/resolv.conf /etc/hosts "$root/etc/"
  root_mount proc /proc -t proc
  root_mount sysfs /sys -t sysfs -o ro
  root_mount /dev /dev --bind
  root_mount tmpfs /dev/shm -t tmpfs
  root_mount devpts /dev/pts -t devpts -o newinstance,ptmxmode=0666
}
root_bind_ro() {
  local bound=() tree b nested
  for tree in "$@"; do
    nested=0
    for b in "${bound[@]}"; do case "$tree/" in "$b/"*) nested=1 ;; esac; done
    if [ $nested = 0 ]; then
      root_mount "$tree" "$tree" --bind -o ro
      bound+=("$tree")
    fi
  done
}
inside() { chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "$@"; }
