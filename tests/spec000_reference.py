"""A straightforward transcription of spec 000's ``LinguisTrie.tokenize`` loop (section 2.2).

Kept in tests/ as an independent oracle for the Sinhala schema: it is written from the
spec's pseudocode, not from wwho's schema or engine, and is deliberately slow and literal.
"""

HAL = "\u0DCA"
ZWJ = "\u200D"
CONSONANTS = {chr(c) for c in range(0x0D9A, 0x0DC7)}
VOWELS = {chr(c) for c in range(0x0D85, 0x0D97)}
VOWEL_SIGNS = {chr(c) for c in range(0x0DCF, 0x0DE0)} | {"\u0DF2", "\u0DF3"}
POST_MODIFIERS = {"\u0D82", "\u0D83"}
WS = (" ", "\t", "\n", "\r")


def tokenize(text, leading_space=False):
    tokens = []
    n = len(text)
    pos = 0
    pending_space = ""
    while pos < n:
        ch = text[pos]
        if leading_space and ch in WS:
            ws_buffer = ""
            while pos < n and text[pos] in WS:
                ws_buffer += text[pos]
                pos += 1
            if ws_buffer.endswith(" "):
                for ws_char in ws_buffer[:-1]:
                    tokens.append(ws_char)
                pending_space = " "
            else:
                for ws_char in ws_buffer:
                    tokens.append(ws_char)
                pending_space = ""
            continue
        if ch in CONSONANTS:
            start = pos
            pos += 1
            while pos < n and text[pos] == HAL:
                if pos + 1 < n and text[pos + 1] == ZWJ:
                    if pos + 2 < n and text[pos + 2] in CONSONANTS:
                        pos += 3
                        continue
                    else:
                        pos += 2
                        break
                elif pos + 1 < n and text[pos + 1] in CONSONANTS:
                    pos += 2
                    continue
                else:
                    break
            if pos < n and text[pos] in VOWEL_SIGNS:
                pos += 1
            elif pos < n and text[pos] == HAL:
                pos += 1
            if pos < n and text[pos] in POST_MODIFIERS:
                pos += 1
            tokens.append(pending_space + text[start:pos])
            pending_space = ""
            continue
        if ch in VOWELS:
            start = pos
            pos += 1
            if pos < n and text[pos] in POST_MODIFIERS:
                pos += 1
            tokens.append(pending_space + text[start:pos])
            pending_space = ""
            continue
        if ch in POST_MODIFIERS or ch == HAL or ch in VOWEL_SIGNS:
            tokens.append(pending_space + ch)
            pending_space = ""
            pos += 1
            continue
        if pending_space:
            tokens.append(pending_space + ch)
            pending_space = ""
        else:
            tokens.append(ch)
        pos += 1
    if pending_space:
        tokens.append(pending_space)
    return tokens


def _is_boundary_token(token):
    import re
    if not token:
        return True
    return not bool(re.search(r"[\u0D80-\u0DFF\u200D]", token))


def segment_into_words(syllables):
    words, current = [], []
    for tok in syllables:
        if _is_boundary_token(tok):
            if current:
                words.append(current)
                current = []
            words.append([tok])
        else:
            if tok[0] in WS and current:
                words.append(current)
                current = []
            current.append(tok)
    if current:
        words.append(current)
    return words
