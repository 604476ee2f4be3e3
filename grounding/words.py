"""Words: the one place for tokens, word lists, cue phrases and negations.

Everything that reads shopper text -- the agent's parser and ranking, and the
grounding gate -- takes its tokens and lexicons from here, so a word list is
written once.  Nothing here knows the catalog.
"""
from __future__ import annotations

import re
from typing import Iterable

from contest.card import COLOR_WORDS as PROTOCOL_COLOR_WORDS
from contest.card import MATERIAL_WORDS as PROTOCOL_MATERIAL_WORDS

# Lower-cased word / number tokens; decimals kept whole (19.99).
TOKEN_PATTERN = r"[a-z0-9]+(?:\.[0-9]+)?"
_TOKEN_RE = re.compile(TOKEN_PATTERN)
_TOKEN_SPAN_RE = re.compile(TOKEN_PATTERN, re.IGNORECASE)
# How many messages each fact reader remembers its reading of: a people turn reads every message of the
# conversation again (who, which budget, what was taken back), and the same few texts recur turn after turn.
MEMO_SIZE = 1 << 14


def tokens(text: str) -> list[str]:
    """Lower-cased word / number tokens (decimals kept whole: 19.99)."""
    return _TOKEN_RE.findall(text.lower())


def tokens_with_spans(text: str) -> list[tuple[str, int, int]]:
    """Every token (lower-cased) with its character span in `text` (for quoting the shopper)."""
    return [(m.group().lower(), m.start(), m.end()) for m in _TOKEN_SPAN_RE.finditer(text)]


def word_families(groups: dict[str, str]) -> dict[str, frozenset[str]]:
    """Each word of the groups (family -> its space-separated words) with the families it belongs to (a word
    may be in two: "coral" is pink and orange, "suede" is suede and leather)."""
    table: dict[str, frozenset[str]] = {}
    for family, words in groups.items():
        for w in words.split():
            table[w] = table.get(w, frozenset()) | {family}
    return table


def families_named(table: dict[str, frozenset[str]], words: Iterable[str]) -> frozenset[str]:
    """The families `words` name in a `word_families` table (a word of no family names none)."""
    out: set[str] = set()
    for w in words:
        out |= table.get(w, frozenset())
    return frozenset(out)


def is_number(tok: str) -> bool:
    return tok.replace(".", "", 1).isdigit()


# Words that carry no product information in shopper messages (template
# scaffolding and conversational filler); removed before soft matching.
FILLER = frozenset("""
a an and are as at be but by for from i in is it me my of on or please some that the this to want with would you
looking i'm im key requirement what matters actually ignore earlier preference need don't dont have additional
still exploring those options not quite right yet ask about one specific attribute use your judgment judgement
hi hey hello can could help find show shopping just browsing now sure something really must non negotiable
important thing mostly well care it's should like ideally thinking was wait forget said before scratch change
plans never mind instead matters doesn't matter particular here flexible pick think best decide call opinion
strong no also plus window any good around at also get buy i'd get looking searching much very so lot has
nice great making mind thing things stuff kind sort maybe perhaps okay ok yes yeah thanks thank
""".split())
# Function words the gate also ignores when it looks a value up in a message.
EXTRA_STOP = frozenset("""
too t s don doesn won isn aren can will which these those there their they them its our your we us he she
if then than such only just even maybe perhaps kind sort type stuff thing things one ones pair something
anything nothing everything someone got go going let lets make made give tell show told say says
""".split())
STOP = FILLER | EXTRA_STOP
# Words of conversation in a person's message, beyond the stop words: they say nothing about the product,
# are never a typo of a catalog word ("sorry" is not "worry", "thats" not "hats") and never a query word.
# With contractions as tokenised ("they're" -> "re"), written without the apostrophe ("theyre") and chat slang.
CONVERSATION_WORDS = frozenset("""
myself looking need needs want wants wanted after got get getting buy buying shopping find finding show
have has having also really pretty little bit lot kind sort something anything thing things one ones
would could should will might maybe please thanks thank hi hello hey do does did am is are was were be been
so too very just only even still like love loves liked idea prefer preferably ideally great nice good fine
okay ok yes no not sure mostly usually always often wear wearing wears use using used
all know other others options option mine none sorry sry oops wait meant mean actually instead changed mind
thx ty pls plz sup yo hmm lol oh super bye goodbye cya
re ve ll didn wasn weren wouldn couldn shouldn haven hasn hadn
ive youre youve youll theyre theyve thats whats doesnt didnt isnt arent wasnt werent wont wouldnt couldnt
shouldnt cant havent hasnt shes hes
yeah yep yup nope nah omg btw tbh idk imo gonna wanna gotta kinda sorta lemme gimme ur ya yall haha um uh
without except avoid hate hates dislike rather guess
hiya ugh woo excited appreciate hoping patient typing next today tomorrow tonight yesterday
smth sth smthg ngl bc cuz coz lmao tho irl lowkey highkey obvs deffo def prob probs asap
theres meh poss reckon somewhere kindly suggest wee ish
""".split())


def content_tokens(text: str) -> list[str]:
    """Lower-cased content tokens in order (stop words and 1-letter words dropped, numbers kept)."""
    return [t for t, _, _ in tokens_with_spans(text) if is_content(t)]


def is_content(tok: str) -> bool:
    return tok not in STOP and (len(tok) > 1 or tok.isdigit())


# ---- materials and colours ---------------------------------------------------------
# The parser's lists: the protocol's words plus common ones shoppers use.
MATERIAL_WORDS: tuple[str, ...] = PROTOCOL_MATERIAL_WORDS + (
    "denim", "linen", "suede", "rubber", "canvas", "cashmere", "fleece", "satin", "velvet")
COLOR_WORDS: tuple[str, ...] = PROTOCOL_COLOR_WORDS + (
    "navy", "beige", "gold", "silver", "khaki", "ivory", "tan")
# The gate's wider lexicon: a value made of these words is catalog vocabulary
# even when no clue spells it out.
MATERIALS = frozenset(MATERIAL_WORDS) | frozenset("""
polyamide elastane lycra acrylic viscose modal bamboo mesh jersey chiffon lace sherpa fur faux vinyl cork jute
hemp merino alpaca mohair tweed corduroy twill flannel terry microfiber neoprene latex foam gold silver
sterling stainless steel titanium tungsten brass copper platinum pearl pearls crystal crystals diamond
diamonds gemstone plastic resin wood wooden glass ceramic acetate metal alloy zinc rhinestone sequin sequins
knit knitted cashmere tulle organza georgette poplin oxford seersucker gabardine shearling sheepskin nubuck
patent synthetic pvc eva tpu tpr pu
""".split())
COLORS = frozenset(COLOR_WORDS) | frozenset("""
teal turquoise maroon burgundy olive coral lavender mint charcoal cream nude camel rose fuchsia magenta cyan
multicolor multicolored multi clear transparent leopard camo camouflage plaid wine mustard apricot champagne
bronze rust taupe peach lilac violet indigo aqua emerald sapphire ruby off colour colors colours color dark
light pastel neon metallic floral striped stripes checkered
""".split())
LEXICON = MATERIALS | COLORS
# Numbers people spell out, one to twelve: one table for the counts of a pack ("set of three", grounding.counts)
# and the amounts of a budget ("twenty-five bucks", grounding.budget).
NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10, "eleven": 11, "twelve": 12}
MATERIAL_RE = re.compile(r"\b(" + "|".join(MATERIAL_WORDS) + r")\b")
COLOR_RE = re.compile(r"\b(" + "|".join(COLOR_WORDS) + r")\b")

# ---- negations (what a negation reaches: grounding/negation.py) ------------------------------------
# A preference taken back in a correction or a change of mind is not true of the product (PERSONAS.md's
# moves), so it is read as a negation: "scratch the beanie", "never mind cotton", "changed my mind on puffy",
# "I was going to get a fleece but ...", and the word a shopper breaks off after ("a maxi... sorry no, a
# short one", "white ones... no, tan").  "I was thinking X" takes X back only when the clause turns
# ("but", "actually", "instead", "changed"): "I was thinking blue would be nice" keeps blue.
RETRACTION_RES = (
    re.compile(r"\b(?:scratch\s+(?:the|an?|that|those)|(?:never ?mind|forget(?: about)?|changed (?:my|his|her|their) "
               r"minds? (?:on|about|from))(?:\s+(?:the|an?|that|those))?)\s+([a-z][a-z]+)"),
)
# Where a shopper breaks off ("a maxi... sorry no", "dainty and thin... no, actually", "a folding compact one...
# nah", "black... hmm, no"): the words said just before it are taken back (grounding.proposals).
BREAK_OFF_RE = re.compile(r"\s*(?:\.\.\.|…)\s*(?:(?:oh|um+|uh+|hmm+|hm+|well)\s*,?\s+)?"
                          r"(?:no\b|nope\b|nah\b|oops|sorry|wait|actually|i mean|i meant|scratch)")
# hand-set (the scripts break off after one to three words): the most words one break-off takes back; and the
# words that end the phrase it takes back (read backwards from the break): "size large... no wait, medium" takes
# back "large", not the size.
BROKEN_OFF_WORDS = 3
BROKEN_OFF_ENDS = frozenset("size sizes color colour".split())
# "I was thinking a fleece but ...", "was going to get heavy insulated winter ones but ...", "I had my heart set on
# high rise but ...", "I was gonna say chunky knit, but ...", "she said silver first, now ...": a plan taken back
# when the clause turns (which of its words, up to RETRACTED_PLAN_WORDS: grounding.proposals).
RETRACTED_PLAN_RE = re.compile(
    r"\b(?:(?:(?:i|we|he|she)\s+)?(?:was|were) (?:thinking|picturing|leaning (?:toward|towards|to)|"
    r"(?:going to|gonna) (?:get|say)|going for|going with|after|set on)|(?:i|we|he|she)\s+had (?:my|our|his|her) "
    r"heart set on|(?:i|we|he|she)\s+thought (?:i|we|he|she) (?:wanted|needed)|"
    r"(?:i|we|he|she|they)\s+(?:said|wanted|asked for|picked)(?=[^,;.!?]*\bfirst\b))\s+"
    r"(?:(?:of|about|an?|the|some|him|her|them|me)\s+)*([a-z][a-z]+(?:[ -][a-z][a-z]+)*?)"
    r"(?=\s*(?:,|;|\.|\bbut\b|\b(?:at )?first\b|\bactually\b|\binstead\b|\bthen\b|\bfor\b|\bin\b|\bwith\b|"
    r"\bto\b))(?=[^.!?]*\b(?:but|actually|instead|changed|rather|now)\b)")
RETRACTED_PLAN_WORDS = 4
# A value that starts with a negation cue ("not red", "no leather") is itself a rejection.
LEADING_NEGATION_RE = re.compile(r"(?:no|not|without|avoid|except|never|nothing|anything but|none of)\s+", re.I)
# Words after a negation that say nothing about the product ("not sure", "not quite").
# "last" ("the cheap ones never last") says how a product wears, not a part of it.
# "see" ("not see-through"): rejecting the word would count against every "see the size chart", while the
# products that answer the wish say "not see-through" themselves.
# A pronoun with its verb, typed without the apostrophe ("wait no shes not pierced"), or a change of mind ("hmm
# no changed my mind, yellow"): "no" there is an interjection, and the negation is the one that follows.
# "without" after a refusal ("he won't wear anything without a hood") is no part: the refusal wants the hood.
NEGATION_STOP = frozenset("an the one ones sorry sure quite really very much yet right it that this so bad only just "
                          "exactly necessarily big fan idea preference particular strong opinion problem worries "
                          "matter style styles kind sort type thing things stuff see last lasts "
                          "shes hes its im ive theyre thats youre weve changed actually scratch forget without "
                          "time".split())
# Negated words that are conversation, not product facts (the gate's stricter list).
NOT_FACTS = frozenset("""sure quite exactly really too very that this those these it them one ones idea clue
problem worries big huge fan fussed bothered picky fussy yet anymore much many more lot fan
""".split())

# ---- what a message is doing ----------------------------------------------------------
OVERRIDE_CUE = re.compile(r"\b(ignore|forget|scratch that|never ?mind|change of plans?|changed my mind|instead|"
                          r"on second thought|disregard)\b")
BOUNDARY_CUE = re.compile(r"\b(your (?:call|judg(?:e)?ment|choice)|you decide|up to you|use your|pick what|"
                          r"whatever you think|you choose|surprise me)\b")
NO_PREFERENCE_CUE = re.compile(r"\b(?:don'?t|do not|doesn'?t|does not|no|not)\b[^.;!?]{0,40}\b(?:preference|care|"
                               r"matter|opinion|particular|fussy|picky|mind)\b|\b(?:flexible|indifferent|"
                               r"any (?:is|will do)|doesn'?t matter|no preference)\b")
NOT_RIGHT_CUE = re.compile(r"\b(?:not quite|aren'?t right|not right|none of (?:these|those|them)|not it|"
                           r"ask me|what would help|not what i want)\b")
# A shopper asking to see more products at once.
MORE_OPTIONS_CUE = re.compile(r"\b(?:show me (?:some |a few )?(?:more|other)|(?:more|other|different) options|"
                              r"show (?:me )?more|see more|more of them|what else do you have)\b", re.I)
# Phrases of a shopper who is only browsing (no product wish beyond the category).
BROWSING_CUES = ("exploring", "browsing", "not sure", "nothing specific", "window", "making up my mind",
                 "just looking", "no idea", "undecided", "looking around")
# A model's reading of a message's intent is kept only with these words in it:
# an override needs change wording ...
OVERRIDE_WORDS = re.compile(r"\b(ignore|forget|scratch|never ?mind|change|changed|instead|rather|switch|actually|"
                            r"different|new|disregard|replace|no longer|on second thought)\b")
# ... and a no-preference a negated preference ("don't care", "no preference", "doesn't
# matter") or a word of indifference; a bare "care" ("I care about X") is the opposite.
NO_PREFERENCE_WORDS = re.compile(r"\b(?:don'?t|doesn'?t|do not|does not|no|not|never)\b[^.;!?]{0,30}"
                                 r"\b(?:care|matter|mind|preference|opinion|fussy|picky)\b|"
                                 r"\b(?:whatever|either (?:way|one)|flexible|indifferent|any (?:is|will do))\b")
# The words of those cues as tokens (negations as tokenised: "don't" -> "don"): a reply made only of
# them, filler and the attribute's name is a bare "no preference" that says nothing of the product.
NO_PREFERENCE_VOCAB = frozenset("""
don doesn didn isn aren care cares matter matters mind preference preferences particular opinion fussy picky
flexible indifferent whatever honestly either way
""".split())
