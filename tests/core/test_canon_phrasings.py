"""Canonicalizers against real-model phrasings (issue 11 §1): every example the issue lists, then a wider table of
the same kinds. Each case is (reply, expected class); the issue's examples all failed before the fix."""

from __future__ import annotations

import pytest

from relgate_tui.core.canon import get_canonicalizer, suggest_canonicalizer
from relgate_tui.core.types import INVALID

NUMERIC = get_canonicalizer("numeric")
MCQ = get_canonicalizer("mcq")
TEXT = get_canonicalizer("text")
CHOICES = ("London", "Paris", "Berlin", "Madrid")

# --- the issue's examples (each misread before the fix) ---------------------------------------------------------

ISSUE_NUMERIC = [
    ("The probability is 1/6.", "1/6"),
    ("So she ate 3/4.", "0.75"),
    ("\\boxed{\\sqrt{3}}", "√3"),
    ("\\boxed{3\\pi}", "3π"),
    ("\\boxed{3^2}", "9"),
    ("\\boxed{\\frac{\\sqrt3}{2}}", "√3/2"),
    ("\\pi/3", "π/3"),
    ("\\boxed{2^{10}}", "1024"),
    ("10^6", "1000000"),
    ("The answer is 6.02*10^23", "602000000000000000000000"),
    ("3 × 10⁸", "300000000"),
    ("1.2 million", "1200000"),
    ("negative 5", "-5"),
    ("3 1/2", "3.5"),
    ("3½", "3.5"),
    ("½", "0.5"),
    ("1 000 000", "1000000"),
    ("forty-two", "42"),
    ('{"answer": 12, "confidence": 0.8}', "12"),
    ("<answer>12</answer>\nThe 3 steps: add the boxes, multiply by the rows, check.", "12"),
    ("Adding the two groups, the answer is 16. Wait, I made an error: 9 + 9 = 18, so it's 18.", "18"),
    ("I'm sorry, but I can't answer question 5 without the diagram it refers to.", INVALID),
    ("First, we list what we know about the trains.\nThen, step 2:", INVALID),
]

ISSUE_MCQ = [
    ("B\n\nOption A is wrong because it ignores friction, and C confuses mass with weight.", (), "B"),
    ("I'd say it's probably B, though C is close.", (), "B"),
    ("Choice (b)", (), "B"),
    ("option c", (), "C"),
    ("b is correct", (), "B"),
    ("The answer is Paris, not Berlin.", CHOICES, "B"),
    ("Both A and C are correct.", (), INVALID),
]

ISSUE_TEXT = [
    ("A", "a"),
    ("Vitamin A", "vitamin a"),
    ("U.S.A.", "usa"),
    ("The final answer is Paris.", "paris"),
    ("So the answer is Paris.", "paris"),
    ("It's Paris.", "paris"),
    ("\\boxed{Paris}", "paris"),
    ("Paris, because it has been the capital of France since 987.", "paris"),
]

ISSUE_REGEX = [
    (r"regex:(?i)vitamin\s+\w+", "Vitamin A", "vitamin a"),
    (r"regex:Answer:\s*(.+)", "Answer: A", "a"),
]


@pytest.mark.parametrize(("answer", "expected"), ISSUE_NUMERIC)
def test_issue_numeric(answer: str, expected: str) -> None:
    assert NUMERIC(answer) == expected


@pytest.mark.parametrize(("answer", "choices", "expected"), ISSUE_MCQ)
def test_issue_mcq(answer: str, choices: tuple[str, ...], expected: str) -> None:
    assert MCQ(answer, choices) == expected


@pytest.mark.parametrize(("answer", "expected"), ISSUE_TEXT)
def test_issue_text(answer: str, expected: str) -> None:
    assert TEXT(answer) == expected


@pytest.mark.parametrize(("spec", "answer", "expected"), ISSUE_REGEX)
def test_issue_regex(spec: str, answer: str, expected: str) -> None:
    assert get_canonicalizer(spec)(answer) == expected


def test_issue_suggest_mcq_for_letter_references_without_choices() -> None:
    assert suggest_canonicalizer(["B", "D", "A"], has_choices=False) == "mcq"


def test_issue_text_lead_ins_do_not_split_classes() -> None:
    forms = ["Paris", "The final answer is Paris.", "So the answer is Paris.", "It's Paris.", "\\boxed{Paris}",
             "Paris. It is the capital and largest city of France."]  # fmt: skip
    assert {TEXT(f) for f in forms} == {"paris"}


def test_issue_surds_and_powers_never_merge_with_their_digits() -> None:
    forms = ["\\boxed{\\sqrt{3}}", "\\boxed{3\\pi}", "\\boxed{3^2}", "\\boxed{\\frac{\\sqrt3}{2}}", "\\pi/3", "3"]
    assert len({NUMERIC(f) for f in forms}) == len(forms)


# --- the wider table: new phrasings of the same kinds ------------------------------------------------------------

NEW_NUMERIC = [
    # fractions before a full stop
    ("Therefore, the probability is 5/36.", "5/36"),
    ("The fraction of red marbles is 2/3.", "2/3"),
    ("Thus x = 7/2.", "3.5"),
    ("**Answer:** 1/4.", "0.25"),
    ("She has eaten 3/8 of the cake.", "0.375"),
    ("The slope of the line is -2/5.", "-0.4"),
    ("$\\boxed{\\dfrac{5}{12}}$.", "5/12"),
    ("The answer is \\(\\frac{2}{3}\\).", "2/3"),
    # surds, π and symbolic answers: their own class, one per expression
    ("The answer is $\\sqrt{3}$.", "√3"),
    ("√3", "√3"),
    ("\\boxed{\\sqrt3}", "√3"),
    ("$\\boxed{\\sqrt{2}}$", "√2"),
    ("The length of the diagonal is √2.", "√2"),
    ("\\boxed{2\\sqrt{2}}", "2√2"),
    ("The answer is $2 \\sqrt{2}$.", "2√2"),
    ("\\boxed{\\frac{\\pi}{3}}", "π/3"),
    ("π/3", "π/3"),
    ("The angle is $\\pi/3$ radians.", "π/3"),
    ("\\boxed{2\\pi}", "2π"),
    ("The circumference is $2\\pi$.", "2π"),
    ("\\boxed{\\frac{3\\sqrt{3}}{2}}", "3√3/2"),
    ("\\boxed{\\frac{1}{\\sqrt{2}}}", "1/√2"),
    ("\\boxed{\\sqrt{3} + 1}", "√3+1"),
    ("\\boxed{x = \\sqrt{5}}", "√5"),
    ("\\boxed{x^2 + 1}", "x^2+1"),
    ("\\boxed{2x + 3}", "2x+3"),
    ("The derivative is \\boxed{3x^2}.", "3x^2"),
    ("\\boxed{4\\pi r^2}", "4πr^2"),
    ("\\boxed{\\sqrt{12}}", "√12"),
    # integer powers and scientific notation
    ("\\boxed{2^{-1}}", "0.5"),
    ("\\boxed{10^{3}}", "1000"),
    ("The answer is 2^10.", "1024"),
    ("There are $2^{5}$ subsets.", "32"),
    ("So the total is 3^4 = 81.", "81"),
    ("Approximately 1.5 x 10^3", "1500"),
    ("The speed of light is about 3 × 10⁸ m/s.", "300000000"),
    ("6.02 × 10²³", "602000000000000000000000"),
    ("The charge is $1.6 \\times 10^{-19}$ C.", "0.00000000000000000016"),
    ("5e-3", "0.005"),
    ("The answer is 4.2E6.", "4200000"),
    ("N = 10⁶", "1000000"),
    ("The area is 12 cm^2.", "12"),
    ("The volume is 27 m³.", "27"),
    # scale words
    ("The answer is 2.5 million.", "2500000"),
    ("About 3 billion people use it.", "3000000000"),
    ("$4.5 thousand", "4500"),
    ("The city has roughly 1.2 million residents.", "1200000"),
    # negatives in words
    ("The temperature dropped to negative 12 degrees.", "-12"),
    ("minus 7", "-7"),
    ("The answer is negative three.", "-3"),
    ("The final answer is negative 0.5.", "-0.5"),
    ("10 minus 4 leaves 6", "6"),
    # mixed numbers and Unicode fractions
    ("2 3/4 cups", "2.75"),
    ("The answer is 1 1/2.", "1.5"),
    ("5¾", "5.75"),
    ("¼", "0.25"),
    ("She ate ⅓ of the pie.", "1/3"),
    ("It takes 2½ hours.", "2.5"),
    ("The board is 7 5/8 inches long.", "7.625"),
    # thousands separated by spaces
    ("The population is 1 000 000.", "1000000"),
    ("12 345 678", "12345678"),
    ("The answer is 250 000 dollars.", "250000"),
    # number words
    ("The answer is twelve.", "12"),
    ("Forty-two.", "42"),
    ("one hundred and five", "105"),
    ("The answer is twenty-one.", "21"),
    ("Seventeen", "17"),
    ("**Answer:** three thousand", "3000"),
    ("The answer is ninety nine.", "99"),
    ("Zero.", "0"),
    # JSON and tags
    ('```json\n{"answer": "42", "reasoning": "6 times 7"}\n```', "42"),
    ('{"reasoning": "There are 3 boxes with 4 each", "answer": 12}', "12"),
    ('{"final_answer": 7.50}', "7.5"),
    ('{"answer": null, "reason": "not enough data for part 2"}', INVALID),
    ('Here is my response: {"answer": "1/2", "confidence": 0.9}', "0.5"),
    ("<answer>3/4</answer>", "0.75"),
    ("<answer> 1,250 </answer> I used 2 steps.", "1250"),
    ("Reasoning: 5 + 7 = 12.\n<answer>12</answer>", "12"),
    ("<answer>\\boxed{64}</answer>\nChecked with 4 cubed.", "64"),
    ("<final_answer>-3</final_answer> (I double-checked 2 ways)", "-3"),
    # self-corrections
    ("So the answer is 24. Actually, wait — I double counted; the correct total is 20.", "20"),
    ("Answer: 45. Wait, no — I forgot the tax. It's 48.", "48"),
    ("The answer is 7. Hmm, that's wrong: 3 + 5 = 8, so it should be 8.", "8"),
    ("The result is 100. Oops, I made a mistake in step 2; it is 110.", "110"),
    ("The answer is 16. Wait, let me verify: 4 × 4 = 16. Yes, it's 16.", "16"),
    ("The answer is 7.\n\nLet me recheck. 3 + 5 = 8. So the answer is 8.", "8"),
    ("The total is 30. Actually, it's 32 because I missed the 2 extra.", "32"),
    # refusals and truncated reasoning: no answer, whatever numbers they mention
    ("I cannot determine the answer without knowing the value of x in equation 3.", INVALID),
    ("I'm sorry, I can't help with that request (policy 4).", INVALID),
    ("I don't have enough information to answer question 2.", INVALID),
    ("As an AI, I cannot browse the internet to check 2024 prices.", INVALID),
    ("There is not enough information in part 1 to solve this.", INVALID),
    ("The value of the 3rd term is not given, so this cannot be determined.", INVALID),
    ("Let's solve step by step.\n1. The train travels 60 km in 1 hour.\n2.", INVALID),
    ("First, 12 * 4 = 48. Then we add 48 to the", INVALID),
    ("Step 1: 5 + 3 = 8\nStep 2:", INVALID),
    ("The total so far is 36 +", INVALID),
    ("So we have 3 apples and", INVALID),
    ("We need to compute the sum of the first 10 terms, which is", INVALID),
    # answers that must still be read
    ("I'm not completely sure, but I think it's 41", "41"),
    ("I can't be certain, but the answer is probably 12.", "12"),
    ("Sorry for the confusion earlier. The answer is 9.", "9"),
    ("It is 10. Actually, no, it's 12.", "12"),
    ("1. Add 3 and 4 to get 7.\n2. Multiply by 2 to get 14.\nSo the answer is 14.", "14"),
    ("In step 3 we found 15 apples in total.", "15"),
    ("We cannot divide by zero here, so we cancel x first.\nThen 2x = 8 gives x = 4.", "4"),
    ("The price of one pen is not given directly, but 3 pens cost $6, so one pen costs $2.", "2"),
    ("The answer is not 9; it is 8.", "8"),
    # times and ratios are their own class, not their last number
    ("The meeting starts at 5:30 pm.", "5:30"),
    ("The ratio of boys to girls is 2:3.", "2:3"),
]

NEW_MCQ = [
    # a letter, then an explanation naming other options
    ("C\n\nA is incorrect since it reverses cause and effect; B and D are unrelated.", (), "C"),
    ("(D)\n\nOptions A, B and C all ignore the boundary condition.", (), "D"),
    ("**B**\n\nA: too small. C: wrong units. D: sign error.", (), "B"),
    ("A\n\nB is tempting, but C and D contradict the premise.", (), "A"),
    # hedges and commitments
    ("I think it's C, although B is also plausible.", (), "C"),
    ("I believe the answer is D, but A is close.", (), "D"),
    ("My best guess is B.", (), "B"),
    ("Probably D, though I'd want to double-check A.", (), "D"),
    ("It's B. A and C are distractors.", (), "B"),
    ("I'd pick C over A here.", (), "C"),
    ("My answer is (A), not (B).", (), "A"),
    ("I'm going with D.", (), "D"),
    # lowercase letters and option words
    ("Choice (d)", (), "D"),
    ("option b", (), "B"),
    ("Option (c) is the right one.", (), "C"),
    ("the correct choice is b", (), "B"),
    ("c is correct", (), "C"),
    ("d is the answer", (), "D"),
    ("a is correct", (), "A"),
    ("I'd go with option b.", (), "B"),
    # option text with a negation or a reason
    ("The answer is Berlin, not Paris.", CHOICES, "C"),
    ("The answer is Madrid rather than London.", CHOICES, "D"),
    ("The answer is London because it is on the Thames.", CHOICES, "A"),
    ("It's Paris, not London or Berlin.", CHOICES, "B"),
    ("Not Berlin — it's Paris.", CHOICES, "B"),
    # several options: no single answer
    ("A and C are both correct.", (), INVALID),
    ("Both B and D are valid.", (), INVALID),
    ("The answer is A and C.", (), INVALID),
    ("The answer is B or D.", (), INVALID),
    ("Either A or B.", (), INVALID),
    ("All of A, B and C are correct.", (), INVALID),
    # single answers that mention other letters are still read
    ("A and B are wrong, so the answer is C.", (), "C"),
    ("Between B and C, I choose C.", (), "C"),
    ("The answer is C; A and B are traps.", (), "C"),
    # articles and words are not options
    ("A or B", (), INVALID),
    ("A is correct.", (), "A"),
    ("B and C are wrong; A is correct.", (), "A"),
    ("I think it's a trick question.", (), INVALID),
    ("A good answer would need more context.", (), INVALID),
]

NEW_TEXT = [
    # leading articles only
    ("The A", "a"),
    ("Option A", "option a"),
    ("Vitamin B12", "vitamin b12"),
    ("Type A personality", "type a personality"),
    ("The U.S.", "us"),
    ("the U.S.A.", "usa"),
    ("A Tale of Two Cities", "tale of two cities"),
    ("Plan A", "plan a"),
    ("Grade A", "grade a"),
    ("An", INVALID),
    # lead-ins and trailing explanations
    ("The final answer is: Mount Everest.", "mount everest"),
    ("Therefore, the answer is Jupiter.", "jupiter"),
    ("So it's Jupiter.", "jupiter"),
    ("It is Jupiter, the largest planet.", "jupiter"),
    ("I think it's Shakespeare.", "shakespeare"),
    ("I believe the answer is Shakespeare.", "shakespeare"),
    ("That would be Shakespeare.", "shakespeare"),
    ("\\boxed{\\text{Shakespeare}}", "shakespeare"),
    ("$\\boxed{\\text{Mount Everest}}$", "mount everest"),
    ("<answer>Jupiter</answer>", "jupiter"),
    ('{"answer": "Jupiter"}', "jupiter"),
    ("Jupiter (the largest planet in the Solar System)", "jupiter"),
    ("Jupiter — it is the largest planet.", "jupiter"),
    ("Jupiter, since it is the largest planet.", "jupiter"),
    ("Jupiter. It has the strongest magnetic field of any planet.", "jupiter"),
    ("Jupiter\n\nJupiter is the largest planet in our Solar System, twice as massive as all the others.", "jupiter"),
    ("Let me think about the planets and their sizes carefully.\nThe answer is Jupiter.", "jupiter"),
    ("Final answer: **Jupiter**", "jupiter"),
    ("**Jupiter**", "jupiter"),
    ("Yes, it is Jupiter.", "jupiter"),
    ("Hence, the answer is the Pacific Ocean.", "pacific ocean"),
    ("Washington, D.C.", "washington dc"),
    ("Let me think about this.\nThe largest planet is the one with the most mass.\nJupiter", "jupiter"),
    ("Okay, so the question asks for the largest planet.\n\nJupiter.", "jupiter"),
    ("Reasoning:\nSaturn is smaller than Jupiter.\nJupiter", "jupiter"),
]


@pytest.mark.parametrize(("answer", "expected"), NEW_NUMERIC)
def test_new_numeric(answer: str, expected: str) -> None:
    assert NUMERIC(answer) == expected


@pytest.mark.parametrize(("answer", "choices", "expected"), NEW_MCQ)
def test_new_mcq(answer: str, choices: tuple[str, ...], expected: str) -> None:
    assert MCQ(answer, choices) == expected


@pytest.mark.parametrize(("answer", "expected"), NEW_TEXT)
def test_new_text(answer: str, expected: str) -> None:
    assert TEXT(answer) == expected


def test_the_new_table_has_at_least_150_phrasings() -> None:
    assert len(NEW_NUMERIC) + len(NEW_MCQ) + len(NEW_TEXT) >= 150
