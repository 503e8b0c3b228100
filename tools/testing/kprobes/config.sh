#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# config.sh SRC OBJ FRAGMENT...: write OBJ/.config as allnoconfig plus the
# fragments, and fail if any symbol a fragment asks for did not stick.
set -euo pipefail
src=$(realpath "$1") obj=$(realpath -m "$2")
shift 2
mkdir -p "$obj"
# Later fragments override earlier ones, symbol by symbol.
cat "$@" | awk -F= '/^CONFIG_/ { if (!($1 in v)) k[++n] = $1; v[$1] = $0 }
	END { for (i = 1; i <= n; i++) print v[k[i]] }' > "$obj/.fragment.new"
if [ -f "$obj/.config" ] && cmp -s "$obj/.fragment.new" "$obj/.fragment" 2>/dev/null; then
	rm -f "$obj/.fragment.new"
	exit 0
fi
mv "$obj/.fragment.new" "$obj/.fragment"
make -s -C "$src" O="$obj" KCONFIG_ALLCONFIG="$obj/.fragment" allnoconfig >/dev/null
bad=0
while read -r line; do
	case $line in
	CONFIG_*=n) sym=${line%%=*}
		    if grep -q "^$sym=" "$obj/.config"; then echo "config: $sym is set, wanted off" >&2; bad=1; fi ;;
	CONFIG_*)   if ! grep -qx "$line" "$obj/.config"; then echo "config: $line did not stick" >&2; bad=1; fi ;;
	esac
done < "$obj/.fragment"
if [ $bad -ne 0 ]; then
	rm -f "$obj/.fragment"
	exit 1
fi
