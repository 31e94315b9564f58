"""Built-in sentence pairs, written for this explorer (not taken from a benchmark).

``ONE_PAIR``: a few telling pairs for the token-pair view, each with a key the page uses to say
what to notice. ``SCORED``: 30 English and 30 Chinese pairs with a similarity score from 0
(unrelated) to 5 (same meaning), given by hand in the style of STS benchmarks, so the Many pairs
view has something to compare the model with. The scores are one person's judgement.
"""

from __future__ import annotations

ONE_PAIR: tuple[tuple[str, str, str], ...] = (
    ("negation", "I love this movie.", "I do not love this movie."),
    ("unrelated", "The cat is sleeping on the sofa.", "Interest rates rose again in March."),
    ("paraphrase", "A man is playing the guitar.", "Someone is strumming a guitar."),
    ("order", "The dog chased the cat.", "The cat chased the dog."),
    ("bank", "I sat on the bank of the river.", "I deposited money at the bank."),
    ("chinese", "我喜欢这部电影。", "我不喜欢这部电影。"),
)

SCORED_EN: tuple[tuple[str, str, float], ...] = (
    ("A man is playing the guitar.", "Someone is strumming a guitar.", 4.6),
    ("A woman is slicing an onion.", "A woman is cutting an onion.", 4.8),
    ("The children are playing in the park.", "Kids are playing outside in a park.", 4.5),
    ("I love this movie.", "I do not love this movie.", 1.2),
    ("The dog chased the cat.", "The cat chased the dog.", 2.0),
    ("The train leaves at six.", "The train departs at 6 o'clock.", 4.7),
    ("She bought a new car.", "She purchased a new vehicle.", 4.6),
    ("The weather is cold today.", "It is freezing outside today.", 4.0),
    ("He is reading a book.", "He is writing a book.", 2.4),
    ("A cat is sleeping on the sofa.", "Interest rates rose again in March.", 0.0),
    ("The soup is too salty.", "There is too much salt in the soup.", 4.7),
    ("The meeting was cancelled.", "The meeting will take place as planned.", 0.8),
    ("A boy is riding a bicycle.", "A child is riding a bike down the street.", 4.0),
    ("The store opens at nine.", "My sister lives in Berlin.", 0.0),
    ("He passed the exam easily.", "He failed the exam.", 1.0),
    ("The baby is crying.", "An infant is in tears.", 4.3),
    ("I sat on the bank of the river.", "I deposited money at the bank.", 0.6),
    ("The plane landed safely.", "The aircraft touched down without problems.", 4.6),
    ("Two men are playing chess.", "Two people are playing a board game.", 3.6),
    ("She is cooking pasta.", "She is eating pasta.", 2.6),
    ("The museum is closed on Mondays.", "On Mondays the museum does not open.", 4.9),
    ("A man is climbing a mountain.", "A woman is swimming in the sea.", 0.6),
    ("The price of bread went up.", "Bread became more expensive.", 4.6),
    ("The computer will not start.", "My laptop does not turn on.", 4.0),
    ("He speaks three languages.", "He loves green tea.", 0.0),
    ("The road is closed because of snow.", "Snow has blocked the road.", 4.2),
    ("The teacher explained the lesson.", "The students ignored the lesson.", 1.6),
    ("A girl is painting a picture.", "A girl is drawing with crayons.", 3.2),
    ("It rained all weekend.", "The weekend was sunny and dry.", 1.0),
    ("Please close the window.", "Could you shut the window, please?", 4.6),
)

SCORED_ZH: tuple[tuple[str, str, float], ...] = (
    ("一个男人在弹吉他。", "有人在弹奏吉他。", 4.6),
    ("我喜欢这部电影。", "我不喜欢这部电影。", 1.2),
    ("今天天气很冷。", "今天外面非常冷。", 4.5),
    ("她买了一辆新车。", "她购买了一辆新汽车。", 4.8),
    ("孩子们在公园里玩。", "小朋友在公园玩耍。", 4.7),
    ("火车六点出发。", "列车将在六点开出。", 4.7),
    ("猫在沙发上睡觉。", "银行利率三月又上涨了。", 0.0),
    ("他在看书。", "他在写书。", 2.4),
    ("汤太咸了。", "汤里放的盐太多了。", 4.6),
    ("会议取消了。", "会议将按计划举行。", 0.8),
    ("他轻松通过了考试。", "他考试没及格。", 1.0),
    ("婴儿在哭。", "小宝宝在哭闹。", 4.7),
    ("飞机安全降落了。", "航班平安着陆。", 4.6),
    ("两个人在下棋。", "两个人在玩棋盘游戏。", 3.8),
    ("她在做意大利面。", "她在吃意大利面。", 2.6),
    ("博物馆周一闭馆。", "周一博物馆不开放。", 4.9),
    ("面包涨价了。", "面包变贵了。", 4.7),
    ("电脑开不了机。", "我的笔记本电脑无法启动。", 4.0),
    ("他会说三种语言。", "他喜欢喝绿茶。", 0.0),
    ("道路因大雪封闭。", "大雪堵住了道路。", 4.2),
    ("老师讲解了课文。", "学生们没听课。", 1.4),
    ("周末一直在下雨。", "周末阳光明媚。", 1.0),
    ("请关上窗户。", "麻烦你把窗户关上。", 4.6),
    ("狗在追猫。", "猫在追狗。", 2.0),
    ("我明天去北京。", "我明天要去上海。", 2.4),
    ("这家餐厅的菜很好吃。", "这家饭馆的饭菜味道不错。", 4.5),
    ("他每天早上跑步。", "他每天早晨都去跑步。", 4.9),
    ("手机没电了。", "手机的电池用完了。", 4.6),
    ("商店九点开门。", "我姐姐住在柏林。", 0.0),
    ("一个女孩在画画。", "一个女孩在用蜡笔涂色。", 3.2),
)

SCORED: tuple[tuple[str, str, float], ...] = SCORED_EN + SCORED_ZH


def example_text(rows: tuple[tuple[str, str, float], ...] = SCORED) -> str:
    """The scored set as the lines a person would paste: A, B and score, tab-separated."""
    return "\n".join(f"{a}\t{b}\t{score:g}" for a, b, score in rows)
