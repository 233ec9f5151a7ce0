#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Manual pages from the documentation strobe keeps (docs/cli.md,
docs/strobed.md), through pandoc, so that there is one source:

  strobe(1)            cli.md's synopsis, exit status, progress, environment
  strobe-CMD(1)        cli.md's section of each command (cc, run, report, ...)
  strobe-filter(5)     cli.md's "Filter files"
  strobed(8)           strobed.md but its configuration file
  strobed.yaml(5)      strobed.md's "Configuration file" and the plugins
  petra-bench(1)       petra-bench.md but its results and its bench script
  petra-crash(1)       petra-crash.md

Markdown tables become tagged paragraphs (a man page is 80 columns wide),
links keep their text, and long code words get break points, so that
`man -l` renders every page without a warning (tests/install checks it).

  scripts/manpages.py DOCS_DIR OUT_DIR VERSION
"""
import os
import re
import subprocess
import sys


def sections(md, level):
    """[(title, body)] of the headings of `level` (2: '## ')."""
    mark = '#' * level + ' '
    parts = re.split(r'(?m)^' + re.escape(mark), md)
    return [(p.split('\n', 1)[0].strip(), p.split('\n', 1)[1] if '\n' in p else '') for p in parts[1:]]


def tables_to_paragraphs(md):
    """Each table row becomes `first cell` then the others, tagged."""
    out, lines, i = [], md.split('\n'), 0
    while i < len(lines):
        if lines[i].startswith('|') and i + 1 < len(lines) and re.match(r'^\|[\s:|-]+\|\s*$', lines[i + 1]):
            head = [c.strip() for c in lines[i].strip().strip('|').split('|')]
            i += 2
            while i < len(lines) and lines[i].startswith('|'):
                cells = [c.strip() for c in re.split(r'(?<!\\)\|', lines[i].strip()[1:-1])]
                rest = [f'{h}: {c}' if len(cells) > 2 and h else c for h, c in zip(head[1:], cells[1:]) if c]
                out += [cells[0] or ' ', ':   ' + '; '.join(rest), '']
                i += 1
            continue
        out.append(lines[i])
        i += 1
    return '\n'.join(out)


def relink(md):
    """Links to other documents keep their text only."""
    return re.sub(r'\[([^\]]+)\]\([^)]+\)', r'\1', md)


def page(name, section, summary, body, version):
    body = re.sub(r'(?m)^(#+) ', lambda m: '#' * max(1, len(m.group(1)) - 1) + ' ', body)
    md = (f'% {name.upper()}({section}) strobe {version} | strobe manual\n\n# NAME\n\n{name} - {summary}\n\n'
          + tables_to_paragraphs(relink(body)))
    return md


def breakable(man):
    """Zero-width break points after / : , | in code words longer than 40
    characters, which groff cannot otherwise fit in a line."""
    def fix(m):
        word = m.group(1)
        if len(word) <= 40:
            return m.group(0)
        return '\\f[V]' + re.sub(r'([/:,|\]])', r'\1\\:', word) + '\\f[R]'
    return re.sub(r'\\f\[V\](.+?)\\f\[R\]', fix, man)


def write(out, name, section, md):
    path = os.path.join(out, f'{name}.{section}')
    man = subprocess.run(['pandoc', '-s', '-f', 'markdown-smart', '-t', 'man'], input=md.encode(),
                         stdout=subprocess.PIPE, check=True).stdout.decode()
    with open(path, 'w') as f:
        f.write(breakable(man))


def main():
    docs, out, version = sys.argv[1:4]
    os.makedirs(out, exist_ok=True)
    cli = open(os.path.join(docs, 'cli.md')).read()
    top = dict(sections(cli, 2))
    synopsis = cli.split('\n## ', 1)[0].split('\n', 1)[1]
    summaries = {
        'cc': 'compile a program ready to be measured',
        'blame-prep': "show the blame analysis of a source file",
        'instrument': "rewrite a C file's directives into measured regions",
        'run': 'run a program under the strobe runtime',
        'record': 'sample a running process',
        'report': 'print the report of an experiment',
        'export': 'write an experiment in a foreign trace or profile format',
        'taskgraph': 'the task graph of an experiment',
        'merge': 'put experiments of several hosts or runs into one, clocks aligned',
        'ls': 'list the metric sets a strobed serves',
        'ctl': 'control a running strobed',
        'petra': "read the heap of strobed's petra store",
    }
    intro = ('# SYNOPSIS\n' + synopsis + '\n# EXIT STATUS\n' + top['Exit status'] + '\n# PROGRESS\n'
             + top['Progress'] + '\n# ENVIRONMENT\n' + top['Environment variables read by the command']
             + '\n# SEE ALSO\n' + ', '.join(f'strobe-{c}(1)' for c in summaries)
             + ', strobe-filter(5), strobed(8), strobed.yaml(5)\n')
    write(out, 'strobe', 1, page('strobe', 1, 'measure, analyse and monitor parallel programs', intro, version))
    for title, body in sections(cli, 2):
        m = re.match(r'`strobe ([a-z-]+)`', title)
        if not m:
            continue
        cmd = m.group(1)
        if cmd == 'run':
            # the filter file format is a page of its own
            before, filt = body.split('### Filter files', 1)
            text, _, after = filt.partition('\n### ')
            body = before + '### Filter files\n\nSee strobe-filter(5).\n\n' + ('### ' + after if after else '')
            write(out, 'strobe-filter', 5,
                  page('strobe-filter', 5, 'region filter files of strobe run', '# DESCRIPTION\n' + text, version))
        write(out, f'strobe-{cmd}', 1,
              page(f'strobe-{cmd}', 1, summaries[cmd], '# DESCRIPTION\n' + body, version))
    daemon = open(os.path.join(docs, 'strobed.md')).read()
    parts = sections(daemon, 2)
    conf = [p for p in parts if p[0] in ('Configuration file', 'Built-in plugins')]
    rest = [p for p in parts if p[0] not in ('Configuration file', 'Built-in plugins', 'Writing a plugin')]
    write(out, 'strobed', 8,
          page('strobed', 8, 'the strobe monitoring daemon',
               ''.join(f'# {t.upper()}\n{b}' for t, b in rest) + '# SEE ALSO\nstrobed.yaml(5), strobe-ls(1), '
               'strobe-ctl(1), strobe-petra(1)\n', version))
    write(out, 'strobed.yaml', 5,
          page('strobed.yaml', 5, 'the configuration file of strobed',
               ''.join(f'# {t.upper()}\n{b}' for t, b in conf) + '# SEE ALSO\nstrobed(8)\n', version))
    for tool, summary, skip in (('petra-bench', 'measure PETRA against PMDK libpmemobj',
                                 ('bench/petra/run.sh', 'Smoke tests', 'Results')),
                                ('petra-crash', 'crash verification of PETRA heaps', ())):
        doc = open(os.path.join(docs, f'{tool}.md')).read()
        intro = doc.split('\n', 1)[1].split('\n## ', 1)[0]
        write(out, tool, 1,
              page(tool, 1, summary, '# DESCRIPTION\n' + intro + ''.join(
                  f'# {t.upper()}\n{b}' for t, b in sections(doc, 2) if t not in skip)
                   + '# SEE ALSO\nstrobe-petra(1), strobed.yaml(5)\n', version))


if __name__ == '__main__':
    main()
