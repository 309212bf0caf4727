#!/usr/bin/env python3
"""Checks that include/hotset's declarations follow docs/api.md's vocabulary.

    check-api-vocabulary.py [--self-test] <include/hotset>

The rules (docs/api.md says why):
  prefix     each header declares functions of its own families only
             (PREFIXES below, the table in docs/api.md);
  lifetime   objects end as they begin: _open with _close, _create with
             _destroy; no _free, _new, _delete, _alloc, _dispose; _init only
             for an options struct (hs_X_options_init) and INIT_EXCEPTIONS;
  options    every hs_X_options has hs_X_options_init; no _ex variants;
  stats      a statistics call is hs_X_stats_get(const hs_X *, hs_X_stats *)
             returning hs_status (or _stats_reset/_total/_hit_ratio/_format);
  typedefs   a declaration names a type by its typedef, never `struct hs_x`;
  output     no FILE in a public header.
--self-test first checks that a broken copy of each rule is caught.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

PREFIXES = {
    'status.h': ['hs_status_', 'hs_last_error', 'hs_last_errno'],
    'version.h': ['hs_version'],
    'storage.h': ['hs_smgr_'],
    'page.h': ['hs_page_'],
    'control.h': ['hs_control_'],
    'pool.h': ['hs_pool_', 'hs_buf_'],
    'durability.h': ['hs_pool_', 'hs_buf_'],
    'stats.h': ['hs_pool_stats_', 'hs_io_'],
    'strategy.h': ['hs_strategy_'],
    'stream.h': ['hs_read_stream_', 'hs_block_range_'],
    'syncscan.h': ['hs_syncscan_'],
    'wal.h': ['hs_wal_'],
    'fault.h': ['hs_smgr_', 'hs_wal_', 'hs_io_op_'],
    'heap.h': ['hs_xact_', 'hs_heap_', 'hs_pk_index_'],
    'vacuum.h': ['hs_vacuum', 'hs_throttle_'],
    'policy.h': ['hs_policy_'],
    'frame_cache.h': ['hs_frame_cache_', 'hs_frame_'],
    'object_cache.h': ['hs_object_cache_', 'hs_object_'],
}
LIFETIME_PAIRS = {'_open': '_close', '_create': '_destroy'}
BANNED_VERBS = ['_free', '_new', '_delete', '_alloc', '_dealloc', '_dispose', '_init', '_ex']
INIT_EXCEPTIONS = {'hs_block_range_init'}  # fills a caller's iterator, not an object
STATS_SUFFIXES = ('_get', '_reset', '_total', '_hit_ratio', '_format')


def strip(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    text = re.sub(r'//[^\n]*', ' ', text)
    text = re.sub(r'#ifdef __cplusplus.*?#endif', ' ', text, flags=re.S)
    return re.sub(r'^[ \t]*#(?:[^\n]*\\\n)*[^\n]*', ' ', text, flags=re.M)


def declarations(text):
    """Top-level declarations (brace depth 0), whitespace-normalised."""
    out, depth, decl = [], 0, ''
    for ch in text:
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
        if ch == ';' and depth == 0:
            out.append(' '.join(decl.split()))
            decl = ''
        else:
            decl += ch
    return out


def check(incdir):
    problems = []
    funcs = []  # (header, name, return type, params)
    typedefs = set()
    for header in sorted(os.listdir(incdir)):
        if not header.endswith('.h'):
            continue
        raw = open(os.path.join(incdir, header)).read()
        text = strip(raw)
        if re.search(r'\bFILE\b', text):
            problems.append(f'{header}: output: a public header names FILE (the library '
                            'writes to no stream; fill a caller\'s buffer instead)')
        typedefs.update(re.findall(r'\}\s*(hs_\w+)\s*;', text))
        typedefs.update(re.findall(r'typedef\s+(?:struct|enum|union)\s+\w+\s+(hs_\w+)\s*;', text))
        for d in declarations(text):
            if d.startswith('typedef') and '(' not in d:
                continue
            for m in re.finditer(r'\bstruct\s+(hs_\w+)\s*\*', d):
                problems.append(f'{header}: typedefs: "struct {m.group(1)} *" in "{d[:80]}": '
                                f'write {m.group(1)} *')
            if d.startswith(('typedef', 'static')):
                continue
            m = re.match(r'(.*?)\b(hs_\w+)\s*\((.*)\)$', d)
            if m:
                funcs.append((header, m.group(2), m.group(1).strip(), m.group(3)))
    names = {f[1] for f in funcs}
    for header, name, ret, params in funcs:
        where = f'{header}: {name}'
        allowed = PREFIXES.get(header)
        if allowed is None:
            problems.append(f'{where}: prefix: {header} is not in the table of families '
                            '(tools/check-api-vocabulary.py PREFIXES and docs/api.md)')
        elif not any(name.startswith(p) for p in allowed):
            problems.append(f'{where}: prefix: {header} declares {", ".join(allowed)}* only')
        nparams = len([x for x in params.split(',') if x.strip() and x.strip() != 'void'])
        constructor = re.search(r'\bhs_\w+\s*\*\s*\*\s*\w*\s*$', params) is not None
        for verb in BANNED_VERBS:
            if name.endswith(verb) or verb + '_' in name[len('hs'):]:
                if verb == '_init' and (name.endswith('_options_init') or name in INIT_EXCEPTIONS):
                    continue
                # An operation named with the word (hs_heap_delete of a tuple)
                # is no lifetime: only a call ending an object by itself is.
                if verb == '_delete' and nparams > 1:
                    continue
                # Nor is a new number (hs_object_cache_new_id, RocksDB's
                # NewId): only a call handing out an object is a birth.
                if verb == '_new' and not constructor and '*' not in ret:
                    continue
                problems.append(f'{where}: lifetime/options: "{verb}" is not a word of the '
                                'API (open/close, create/destroy, hs_X_options_init; no _ex)')
        for begin, end in list(LIFETIME_PAIRS.items()) + [(e, b) for b, e in LIFETIME_PAIRS.items()]:
            # A lifetime call: a begin hands the object out (hs_x **out), an
            # end takes it alone. hs_smgr_create(smgr, rel, fork) makes a
            # relation's file: an operation, not the storage manager's birth.
            if begin in LIFETIME_PAIRS and not constructor:
                continue
            if begin not in LIFETIME_PAIRS and nparams != 1:
                continue
            if name.endswith(begin):
                stem = name[:-len(begin)]
                if stem + end not in names:
                    problems.append(f'{where}: lifetime: no {stem}{end} to end what {name} '
                                    'begins (or the other way round)')
        if name.endswith('_options_init'):
            if name[:-len('_init')] not in typedefs:
                problems.append(f'{where}: options: no struct {name[:-len("_init")]}')
        if '_stats' in name:
            stem, _, rest = name.partition('_stats')
            if '_' + rest.lstrip('_') not in STATS_SUFFIXES and rest not in STATS_SUFFIXES:
                problems.append(f'{where}: stats: a statistics call is {stem}_stats_get '
                                '(or _reset, _total, _hit_ratio, _format)')
            if rest == '_get':
                if ret != 'hs_status':
                    problems.append(f'{where}: stats: returns {ret}, not hs_status')
                if stem + '_stats' not in typedefs:
                    problems.append(f'{where}: stats: fills no {stem}_stats (the struct is '
                                    'named after its owner)')
                if not params.startswith('const '):
                    problems.append(f'{where}: stats: the owner is not passed const')
    for t in sorted(typedefs):
        if t.endswith('_options') and t + '_init' not in names:
            problems.append(f'{t}: options: no {t}_init')
    return problems


BROKEN = {
    'lifetime _free': ('strategy.h', 'void hs_strategy_free(hs_strategy *s);'),
    'lifetime _new': ('strategy.h', 'hs_strategy *hs_strategy_new(void);'),
    'create without destroy': ('policy.h', 'hs_status hs_policy_thing_create(int x, hs_policy **out);'),
    'close without open': ('policy.h', 'void hs_policy_close(hs_policy *p);'),
    'prefix': ('strategy.h', 'bool hs_pool_other(const hs_pool *pool);'),
    '_ex variant': ('storage.h', 'hs_status hs_smgr_open_ex(const char *d, hs_smgr **o);'),
    'stats as a bare call': ('pool.h', 'hs_status hs_pool_stats(const hs_pool *p, int *o);'),
    'stats returning void': ('wal.h', 'void hs_wal_x_stats_get(const hs_wal *w, int *o);'),
    'options without init': ('wal.h', 'typedef struct hs_wal_y_options { int a; } hs_wal_y_options;'),
    'struct tag in a prototype': ('durability.h', 'struct hs_wal *hs_pool_log(hs_pool *pool);'),
    'FILE': ('stats.h', 'hs_status hs_pool_stats_format(const void *s, FILE *out);'),
}


def self_test(incdir):
    failed = False
    for what, (header, line) in BROKEN.items():
        with tempfile.TemporaryDirectory() as tmp:
            for h in os.listdir(incdir):
                shutil.copy(os.path.join(incdir, h), tmp)
            path = os.path.join(tmp, header)
            text = open(path).read()
            text = text.replace('#pragma GCC visibility pop', line + '\n#pragma GCC visibility pop', 1)
            open(path, 'w').write(text)
            if not check(tmp):
                print(f'SELF-TEST FAILED: a header with "{line}" ({what}) passed')
                failed = True
    return not failed


def main():
    args = sys.argv[1:]
    st = '--self-test' in args
    args = [a for a in args if a != '--self-test']
    if len(args) != 1:
        print(__doc__)
        return 2
    if st and not self_test(args[0]):
        return 1
    problems = check(args[0])
    for p in problems:
        print('FAIL:', p)
    if problems:
        print(f'{len(problems)} declarations break docs/api.md\'s vocabulary')
        return 1
    print('ok: include/hotset follows docs/api.md\'s vocabulary' + (' (self-test passed)' if st else ''))
    return 0


if __name__ == '__main__':
    sys.exit(main())
