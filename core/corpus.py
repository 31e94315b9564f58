"""A small corpus written for this project, used to measure how alike unrelated vectors look.

The sentences cover unrelated topics so that two random tokens from two different sentences are,
as far as meaning goes, unrelated: their mean cosine is the baseline a raw cosine must be read
against (Ethayarajh 2019). A few ambiguous words ("bank", "bat", "spring", "light", "match")
appear in two senses, as in the page's own examples. Kept short so every model can run it once
in a second or two.
"""

from __future__ import annotations

CORPUS: tuple[str, ...] = (
    "We had a picnic on the grassy bank of the river.",
    "She opened a savings account at the bank on Main Street.",
    "The bank raised its interest rates again this spring.",
    "Ducks were sleeping on the muddy bank near the old bridge.",
    "He paid the rent in cash because his card was declined.",
    "A bat flew out of the cave as soon as the sun went down.",
    "The boy swung the bat and hit the ball over the fence.",
    "Water from the spring tasted cold and clean.",
    "The old mattress had a broken spring that squeaked all night.",
    "Please turn off the light before you leave the room.",
    "The suitcase was light enough for a child to carry.",
    "He struck a match to light the candle.",
    "Our team lost the match by a single goal.",
    "Photosynthesis turns sunlight, water and carbon dioxide into sugar.",
    "The volcano erupted after weeks of small earthquakes.",
    "My grandmother bakes bread every Sunday morning.",
    "Add a pinch of salt and stir the soup slowly.",
    "The train to Berlin was delayed by forty minutes.",
    "Pilots check the weather before every flight.",
    "The museum keeps paintings from the seventeenth century.",
    "She practised the violin for two hours after school.",
    "The parliament voted on the new tax law yesterday.",
    "Cats sleep for most of the day and hunt at night.",
    "The doctor said the fever would pass in a few days.",
    "Compile the program again after fixing the syntax error.",
    "A prime number has exactly two divisors.",
    "The glacier has shrunk a great deal over the last fifty years.",
    "They planted tomatoes, beans and sunflowers in the garden.",
    "The referee blew the whistle and the crowd went quiet.",
    "Heavy rain flooded the streets of the small town.",
    "The library closes early on public holidays.",
    "He forgot his umbrella on the bus again.",
)
