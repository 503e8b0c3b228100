#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The global names our objects define: prefixed, and defined nowhere else.

Our kprobes code goes into kernels built with configurations we do not
build: a global symbol of ours with the name of a function or variable
defined anywhere else in the tree breaks the link of every kernel that
has both (drivers/counter's counter_alloc() against a kprobes helper of
that name, once). So, for every object of ours given:

 - every strong global symbol it defines (nm: T, D, B, R; weak ones are
   defaults meant to be overridden) must carry the subsystem's prefix,
   or be one of the names the tree's interface gives us;
 - no file of the tree but ours may define it: a non-static function or
   variable in C, a static inline in a header, or a global label in
   assembly. Code of another architecture does not count for an
   object of one architecture's directory (arch/x86/...), since the two
   are never linked together; for the arch-independent core, every
   architecture's code counts.

Usage: check-names.py SRC OWNED-FILES BUILD-DIR...
Checks the objects of kernel/kprobes/, arch/*/kernel/kprobes/ and our ones
in arch/{arm64,riscv}/kernel/probes/ in each
build directory, and the KUnit suites' objects where they are built in.
Prints each problem and exits 1 when there is one.
"""
import os
import re
import subprocess
import sys

PREFIX = re.compile(r'^(kprobes?_|kretprobes?_|optprobe_|arch_|__arch_)')

# Names the tree's interface fixes: callers and other architectures use them.
INTERFACE = {
    'get_kprobe', 'register_kprobe', 'register_kprobes', 'unregister_kprobe',
    'unregister_kprobes', 'register_kretprobe', 'register_kretprobes',
    'unregister_kretprobe', 'unregister_kretprobes', 'enable_kprobe',
    'disable_kprobe', 'dump_kprobe', 'within_kprobe_blacklist',
    'wait_for_kprobe_optimizer', 'opt_pre_handler', 'current_kprobe',
    'alloc_insn_page', 'alloc_optinsn_page', 'free_optinsn_page',
    '__get_insn_slot', '__free_insn_slot', '__is_insn_slot_addr',
    '__kretprobe_trampoline_handler', '__kretprobe_trampoline',
}

# Symbols the toolchain and the export macros make, not names of ours.
GENERATED = re.compile(r'^(__ksymtab|__kstrtab|__kcrctab|__export_symbol|__pfx_|__cfi_|'
                       r'__UNIQUE_ID|__initcall|__addressable|__SCK__|__SCT__|'
                       r'__tracepoint|__traceiter|__probestub|_kprobe_blacklist|'
                       r'__kunit|__param|__mod_|\.)')

# Our objects in arch/{arm64,riscv}/kernel/probes/ (the rest there is the
# tree's).
OUR_PROBES_OBJECTS = {'breakpoint', 'arming', 'kretprobe', 'kretprobe_trampoline',
                      'ftrace_entry', 'ftrace_stub', 'optimize', 'optprobe', 'liveness',
                      'kunit_cases', 'kunit_targets', 'kprobes_arm64_kunit',
                      'kprobes_riscv_kunit'}

# Never linked into a kernel.
SKIP_DIRS = ('tools/', 'scripts/', 'Documentation/', 'samples/', 'usr/')


def our_symbols(obj):
    out = subprocess.run(['nm', '--defined-only', '-g', obj], check=True,
                         capture_output=True, text=True).stdout
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in 'TDBRG' and not GENERATED.match(parts[2]):
            yield parts[2]


def our_objects(build):
    """(object, arch) for our objects linked into the kernel of @build;
    arch is None for the arch-independent ones."""
    objs = []
    core = os.path.join(build, 'kernel/kprobes')
    if os.path.isdir(core):
        objs += [(os.path.join(core, f), None) for f in sorted(os.listdir(core))
                 if f.endswith('.o')]
    arch_dir = os.path.join(build, 'arch')
    for arch in sorted(os.listdir(arch_dir)) if os.path.isdir(arch_dir) else []:
        d = os.path.join(arch_dir, arch, 'kernel/kprobes')
        if os.path.isdir(d):
            objs += [(os.path.join(d, f), arch) for f in sorted(os.listdir(d))
                     if f.endswith('.o')]
        # arm64's and riscv's directories also hold the decoder and
        # uprobes, which are the tree's: only our sources' objects count.
        d = os.path.join(arch_dir, arch, 'kernel/probes')
        if os.path.isdir(d):
            objs += [(os.path.join(d, f), arch) for f in sorted(os.listdir(d))
                     if f.endswith('.o') and f[:-2] in OUR_PROBES_OBJECTS]
    # The KUnit suites are linked in only when built in; their objects
    # (kunit in the name) then count, without the prefix rule.
    objs = [o for o in objs if not o[0].endswith('.mod.o')]
    config = os.path.join(build, '.config')
    if os.path.exists(config) and 'CONFIG_KPROBES_SANITY_TEST=y\n' in open(config).read():
        objs.append((os.path.join(build, 'lib/test_kprobes.o'), None))
    else:
        objs = [o for o in objs if not is_test_object(o[0])]
    return objs


def is_test_object(obj):
    return obj.endswith('lib/test_kprobes.o') or 'kunit' in os.path.basename(obj)


def owned_paths(owned_file):
    paths = []
    for line in open(owned_file):
        line = line.split('#', 1)[0].strip()
        if line:
            paths.append(line)
    return paths


def is_owned(path, owned):
    return any(path == p or (p.endswith('/') and path.startswith(p)) for p in owned)


def after_parens(text, pos):
    """The first significant character after the parenthesis opening at pos."""
    depth = 0
    i = pos
    while i < len(text):
        c = text[i]
        if c == '(':
            depth += 1
        elif c == ')':
            depth -= 1
            if depth == 0:
                break
        i += 1
    rest = text[i + 1:i + 400]
    # Attributes and macros between the declarator and the body.
    rest = re.sub(r'__\w+(\s*\(\([^)]*\)\))?|\b[A-Z_]+\b(\([^)]*\))?', ' ', rest)
    rest = rest.lstrip()
    return rest[:1]


def definitions(path, text, name):
    """Lines of @text where @name is defined with external linkage (or as a
    static inline in a header), as (line number, line)."""
    header = path.endswith('.h')
    found = []
    word = re.compile(r'\b' + re.escape(name) + r'\b')
    for m in word.finditer(text):
        start = text.rfind('\n', 0, m.start()) + 1
        end = text.find('\n', m.end())
        line = text[start:end if end >= 0 else len(text)]
        number = text.count('\n', 0, start) + 1
        if path.endswith('.S'):
            if re.match(r'\s*(SYM_\w*START\w*\(\s*' + re.escape(name) + r'\b|\.globl\s+' +
                        re.escape(name) + r'\b)', line):
                found.append((number, line))
            continue
        if not line or line[0].isspace() or line.startswith(('#', 'extern', 'typedef', '}')):
            continue
        if line.lstrip().startswith(('*', '//', '/*')):
            continue
        static = re.match(r'(static|STATIC)\b', line) is not None
        if static and not header:
            continue
        before = line[:m.start() - start]
        after = text[m.end():m.end() + 200]
        if re.match(r'\s*\(', after) and '=' not in before and '(' not in before:
            # A function: defined when its parameter list is followed by a body.
            if after_parens(text, m.end() + after.index('(')) == '{':
                found.append((number, line))
            continue
        if header and not static:
            continue		# a declaration without extern, or a struct member
        if '(' not in before and re.match(r'\s*(\[[^]]*\])?\s*(__\w+(\([^)]*\))?\s*)*(=|;)',
                                           after):
            found.append((number, line))
            continue
        # DEFINE_PER_CPU(type, name), DEFINE_MUTEX(name), LIST_HEAD(name), ...
        if re.match(r'(DEFINE_\w+|LIST_HEAD|HLIST_HEAD)\s*\(', line) and \
                re.match(r'\s*\)', after):
            found.append((number, line))
    return found


def main():
    if len(sys.argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    src, owned_file, builds = sys.argv[1], sys.argv[2], sys.argv[3:]
    owned = owned_paths(owned_file)
    problems = []
    names = {}		# name -> set of arches of the objects that define it
    objs = [o for b in builds for o in our_objects(b)]
    if not objs:
        print('check-names: no objects of ours built', file=sys.stderr)
        return 2
    for obj, arch in objs:
        prefix_rule = not is_test_object(obj)
        for name in our_symbols(obj):
            names.setdefault(name, set()).add(arch)
            if prefix_rule and not PREFIX.match(name) and name not in INTERFACE:
                problems.append(f'{os.path.relpath(obj)}: {name}: a global name without '
                                f'the subsystem prefix (kprobe_, kretprobe_, ...): '
                                f'make it static or prefix it')
    if names:
        pattern = '|'.join(sorted(re.escape(n) for n in names))
        grep = subprocess.run(['grep', '-rlwE', '--include=*.c', '--include=*.h',
                               '--include=*.S', pattern, '.'], cwd=src,
                              capture_output=True, text=True)
        for path in sorted(grep.stdout.split()):
            path = path[2:] if path.startswith('./') else path
            if path.startswith(SKIP_DIRS) or is_owned(path, owned):
                continue
            text = open(os.path.join(src, path), encoding='utf-8', errors='replace').read()
            for name, arches in names.items():
                if name not in text:
                    continue
                m = re.match(r'arch/([^/]+)/', path)
                # Another architecture's code is never linked with an
                # object of one architecture's directory.
                if m and None not in arches and m.group(1) not in arches:
                    continue
                for number, line in definitions(path, text, name):
                    problems.append(f'{path}:{number}: defines {name}, a global name of '
                                    f'ours: {line.strip()}')
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
