# Sourced by install-n8n.sh. Every n8n install in the cache is about 3 GB, and a change of the pin or
# of Node installs next to the old one, which nothing would remove.

# Days an install may go unused (its marker's time is its last use) before it is removed.
UNUSED_DAYS=14

# prune_unused_installs <cache root> <install in use>: removes the n8n installs nobody used for
# UNUSED_DAYS days and unfinished ones (no marker) left for two days; never the one in use, nor
# one whose install is running (its lock folder exists). It takes an install's lock to remove it,
# and a removal that fails is said, never the reason the install in use fails.
prune_unused_installs() {
	local cache_root="$1" in_use="$2" folder
	for folder in "$cache_root"/n8n-*/; do
		folder="${folder%/}"
		case "$folder" in *.lock.d) continue ;; esac
		[ -d "$folder" ] && [ "$folder" != "$in_use" ] || continue
		mkdir "$folder.lock.d" 2>/dev/null || continue
		if is_unused "$folder"; then
			rm -rf "$folder" || echo "Could not remove $folder" >&2
		fi
		rmdir "$folder.lock.d"
	done
}

# is_unused <install folder>: says why it goes, when it does.
is_unused() {
	local folder="$1"
	if [ -f "$folder/.install-complete" ]; then
		[ -n "$(find "$folder/.install-complete" -mtime +"$UNUSED_DAYS")" ] || return 1
		echo "Removing an n8n install unused for over $UNUSED_DAYS days: $folder" >&2
	else
		[ -n "$(find "$folder" -maxdepth 0 -mtime +1)" ] || return 1
		echo "Removing an unfinished n8n install left for two days: $folder" >&2
	fi
}
