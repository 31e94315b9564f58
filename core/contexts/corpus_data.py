"""The Contexts page's built-in corpus, written for this explorer (nothing copied).

Twenty ambiguous English words in two senses each, ten Chinese words or characters in two senses
each (words a Chinese-vocabulary model reads one character a token), six sentences per sense,
each holding its word once as a whole word; and general sentences in both languages around them,
so a word's nearest neighbours can be other words too. Sense labels are short names
(``river`` / ``money``); the page shows them through its translations.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CorpusRecord:
    """One sentence of a corpus; ``word`` and ``sense`` where it is labelled (a user's corpus
    puts its own label in ``sense``, with no word)."""

    sentence: str
    word: str | None = None
    sense: str | None = None
    language: str = "en"


def _senses(language: str, word: str, *groups: tuple[str, tuple[str, ...]]
            ) -> tuple[CorpusRecord, ...]:
    return tuple(CorpusRecord(s, word, sense, language) for sense, sentences in groups
                 for s in sentences)


def _plain(language: str, text: str) -> tuple[CorpusRecord, ...]:
    return tuple(CorpusRecord(line.strip(), None, None, language)
                 for line in text.strip().splitlines() if line.strip())


ENGLISH_SENSES = (
    _senses("en", "bank", ("river", (
        "We had a picnic on the grassy bank by the water.",
        "The canoe drifted towards the far bank of the stream.",
        "Reeds grew thick along the muddy bank of the lake.",
        "A heron stood very still on the bank of the river.",
        "The flood washed away part of the steep bank near the mill.",
        "Children fished from the bank while their parents watched.",
    )), ("money", (
        "She opened a savings account at the bank last week.",
        "The bank approved his loan for a small bakery.",
        "I need to ask the bank why my card was declined.",
        "The bank raised its interest rates again.",
        "He withdrew some cash from the bank on the corner.",
        "The bank closes at four on Fridays.",
    ))),
    _senses("en", "bat", ("animal", (
        "A bat flew out of the cave as the sun went down.",
        "The bat hangs upside down while it sleeps.",
        "At dusk a small bat hunted moths above the pond.",
        "The bat finds insects in the dark by listening to echoes.",
        "We saw a bat circling the street lamp.",
        "A fruit bat can have wings wider than a metre.",
    )), ("sport", (
        "The boy swung the bat and hit the ball over the fence.",
        "She bought a new cricket bat for the season.",
        "He gripped the bat tightly and waited for the pitch.",
        "The wooden bat cracked when it hit the ball.",
        "Hold the bat with both hands and keep your eyes on the ball.",
        "The coach handed him a lighter bat.",
    ))),
    _senses("en", "spring", ("season", (
        "The cherry trees blossom every spring.",
        "We plan to visit our cousins in the spring.",
        "Birds return from the south in early spring.",
        "This spring was warmer and wetter than usual.",
        "The farmers sow their seeds in spring.",
        "Last spring the whole valley was green.",
    )), ("coil", (
        "The old mattress had a broken spring that squeaked.",
        "A steel spring pushes the button back up.",
        "The clock stopped because its spring had worn out.",
        "He stretched the spring and let it snap back.",
        "Inside the pen there is a tiny spring.",
        "The spring in the door closes it automatically.",
    ))),
    _senses("en", "light", ("lamp", (
        "Please turn off the light before you leave the room.",
        "The light from the window fell across the table.",
        "A green light tells drivers they can go.",
        "The kitchen light flickered during the storm.",
        "Plants need light to grow.",
        "She read by the light of a candle.",
    )), ("weight", (
        "The suitcase was light enough for a child to carry.",
        "This jacket is warm but very light.",
        "Aluminium is a light metal used in aircraft.",
        "Pack something light for the long walk.",
        "The box felt surprisingly light for its size.",
        "He prefers a light bicycle for racing.",
    ))),
    _senses("en", "match", ("game", (
        "Our team lost the match by a single goal.",
        "The tennis match lasted almost four hours.",
        "Thousands of fans came to watch the final match.",
        "The match was cancelled because of heavy rain.",
        "She won her first match of the tournament easily.",
        "They played a friendly match against the village team.",
    )), ("fire", (
        "He struck a match to light the candle.",
        "The match went out in the wind.",
        "Keep the match away from the dry grass.",
        "She used her last match to start the stove.",
        "A single match can start a forest fire.",
        "The wet match would not catch.",
    ))),
    _senses("en", "bark", ("dog", (
        "The dog let out a loud bark at the postman.",
        "We heard a bark from the garden next door.",
        "His puppy has a high little bark.",
        "A sudden bark woke the baby.",
        "The guard dog gave one warning bark.",
        "Every bark echoed down the empty street.",
    )), ("tree", (
        "The bark of the old oak was rough and cracked.",
        "Deer had chewed the bark off the young trees.",
        "Some medicines were first made from willow bark.",
        "The birch has white bark that peels in strips.",
        "Insects live under the loose bark.",
        "She pressed her hand against the cool bark.",
    ))),
    _senses("en", "crane", ("bird", (
        "A crane waded slowly through the shallow marsh.",
        "The crane spread its long wings and took off.",
        "Each winter the crane flies south with its flock.",
        "We watched a crane catch a frog in the reeds.",
        "The red-crowned crane is a symbol of long life.",
        "A crane stood on one leg in the wetland.",
    )), ("machine", (
        "A tall crane lifted the steel beams onto the roof.",
        "The crane unloaded containers from the ship.",
        "The crane operator sits high above the building site.",
        "They needed a crane to move the fallen statue.",
        "The crane swung the concrete block into place.",
        "A yellow crane towered over the new tower block.",
    ))),
    _senses("en", "date", ("day", (
        "Write the date at the top of the page.",
        "We have not set a date for the wedding yet.",
        "The expiry date is printed on the lid.",
        "What is the date of the exam?",
        "Please check the date on your ticket.",
        "The meeting moved to a later date.",
    )), ("fruit", (
        "She ate a sweet date with her tea.",
        "The date palm grows well in the desert.",
        "Chop one date and add it to the porridge.",
        "A dried date is sticky and very sweet.",
        "He stuffed each date with an almond.",
        "This cake is sweetened with date paste.",
    ))),
    _senses("en", "fair", ("just", (
        "It is not fair that he got two pieces.",
        "The referee tried to be fair to both teams.",
        "Everyone deserves a fair trial.",
        "That seems a fair price for a used bike.",
        "She is strict but fair with her students.",
        "We want a fair share of the profits.",
    )), ("festival", (
        "We rode the big wheel at the fair.",
        "The county fair opens next weekend.",
        "He won a goldfish at the fair.",
        "There was candy floss and music at the fair.",
        "Farmers showed their best cows at the fair.",
        "The book fair attracts publishers from many countries.",
    ))),
    _senses("en", "fan", ("cooling", (
        "Turn on the fan, it is hot in here.",
        "The ceiling fan spun slowly above the bed.",
        "The laptop fan gets noisy under heavy load.",
        "She cooled herself with a paper fan.",
        "The old fan rattled all night.",
        "A desk fan blew the papers off the table.",
    )), ("supporter", (
        "He has been a fan of the club since childhood.",
        "A fan asked the singer for an autograph.",
        "She is a huge fan of detective novels.",
        "Every fan in the stadium stood up and cheered.",
        "The actor answered letters from a young fan.",
        "I am not a fan of spicy food.",
    ))),
    _senses("en", "key", ("lock", (
        "I lost the key to the front door.",
        "He turned the key and the lock clicked open.",
        "Keep the spare key under the flowerpot.",
        "The key was hanging on a hook by the door.",
        "She could not find her car key anywhere.",
        "This key opens the garden shed.",
    )), ("music", (
        "The song is written in the key of G major.",
        "The singer asked to lower the key a little.",
        "The piece changes key in the last verse.",
        "A minor key often sounds sad.",
        "The choir started in the wrong key.",
        "Play the scale in the key of D.",
    ))),
    _senses("en", "mouse", ("animal", (
        "A mouse ran across the kitchen floor.",
        "The cat caught a mouse in the barn.",
        "A field mouse built its nest in the hay.",
        "The mouse nibbled a hole in the bag of grain.",
        "She screamed when she saw the mouse.",
        "A tiny mouse hid behind the cupboard.",
    )), ("computer", (
        "Click the left button of the mouse to open the file.",
        "My wireless mouse needs new batteries.",
        "Move the mouse to the top corner of the screen.",
        "He prefers a mouse to the touchpad.",
        "The mouse stopped working after the update.",
        "Drag the picture with the mouse.",
    ))),
    _senses("en", "palm", ("hand", (
        "She held the coin in the palm of her hand.",
        "The fortune teller looked at his palm.",
        "His palm was sweaty before the interview.",
        "He wrote the number on his palm.",
        "A bee stung her on the palm.",
        "Rub the cream into your palm.",
    )), ("tree", (
        "A coconut palm leaned over the beach.",
        "We rested in the shade of a tall palm.",
        "The palm swayed in the sea breeze.",
        "They planted a palm in the courtyard.",
        "A storm bent every palm along the coast.",
        "Dates grow in clusters high on the palm.",
    ))),
    _senses("en", "pitch", ("field", (
        "The players ran onto the pitch.",
        "Rain left the football pitch muddy.",
        "The groundsman mowed the pitch before the game.",
        "Fans invaded the pitch after the final whistle.",
        "The cricket pitch was dry and hard.",
        "Nobody is allowed on the pitch during training.",
    )), ("sound", (
        "Her voice rose in pitch when she was excited.",
        "The violinist adjusted the pitch of the string.",
        "A whistle has a very high pitch.",
        "He has perfect pitch and can name any note.",
        "The engine's pitch dropped as it slowed down.",
        "Singers must hold the pitch steady.",
    ))),
    _senses("en", "plant", ("living", (
        "Water the plant on the windowsill twice a week.",
        "This plant needs plenty of sunlight.",
        "A tomato plant grew by the fence.",
        "The plant turned its leaves towards the window.",
        "She gave me a small plant for my desk.",
        "That plant is poisonous to cats.",
    )), ("factory", (
        "The car plant employs two thousand workers.",
        "The power plant burns gas to make electricity.",
        "The plant will close at the end of the year.",
        "Engineers inspected the water treatment plant.",
        "The chemical plant was fined for polluting the river.",
        "He works night shifts at the steel plant.",
    ))),
    _senses("en", "ring", ("jewellery", (
        "He gave her a gold ring with a small diamond.",
        "She lost her wedding ring in the sea.",
        "The ring was too tight for her finger.",
        "A silver ring glittered in the shop window.",
        "He twisted the ring nervously.",
        "The ring had belonged to her grandmother.",
    )), ("sound", (
        "I heard the ring of the doorbell.",
        "Give me a ring when you arrive.",
        "The ring of the phone woke me up.",
        "There was a faint ring of bells in the distance.",
        "The alarm's ring was loud and shrill.",
        "Wait for the third ring before you answer.",
    ))),
    _senses("en", "rock", ("stone", (
        "He sat on a flat rock by the sea.",
        "The climber reached for the next rock.",
        "A falling rock blocked the mountain road.",
        "Waves crashed against the rock.",
        "The crab hid under a rock.",
        "This rock is full of tiny fossils.",
    )), ("music", (
        "They played loud rock all night.",
        "Her favourite band plays classic rock.",
        "He learned guitar by copying rock songs.",
        "The rock concert sold out in minutes.",
        "Punk grew out of rock in the seventies.",
        "My father still listens to rock on vinyl.",
    ))),
    _senses("en", "seal", ("animal", (
        "A seal basked on the rocks in the sun.",
        "The seal dived and came up with a fish.",
        "We watched a grey seal pup on the beach.",
        "A seal barked at the passing boat.",
        "The seal slid back into the icy water.",
        "The zoo's seal balanced a ball on its nose.",
    )), ("closure", (
        "Check the seal on the jar before you buy it.",
        "The letter was closed with a wax seal.",
        "Break the seal to open the box.",
        "A rubber seal keeps the water out.",
        "The king pressed his seal into the wax.",
        "The seal on the bottle was broken.",
    ))),
    _senses("en", "scale", ("weighing", (
        "Put the flour on the kitchen scale.",
        "He stepped on the scale after the holidays.",
        "The shop scale showed two kilos of apples.",
        "The baby was weighed on a special scale.",
        "That scale is not accurate.",
        "Place the parcel on the scale.",
    )), ("fish", (
        "A shiny scale stuck to the knife.",
        "Each scale on the fish overlapped the next.",
        "She found a scale from a carp in the sink.",
        "A fish scale glinted on the wet deck.",
        "The dragon in the story had a golden scale on its chest.",
        "Under the microscope each scale looked like a tiny shell.",
    ))),
    _senses("en", "watch", ("timepiece", (
        "He glanced at his watch and hurried out.",
        "My watch is five minutes fast.",
        "She got a new watch for her birthday.",
        "The battery in my watch has died.",
        "His watch has a leather strap.",
        "I left my watch by the sink.",
    )), ("look", (
        "We like to watch the birds in the garden.",
        "Come and watch the sunset with me.",
        "They stayed up late to watch the film.",
        "Please watch the children while I cook.",
        "Watch how she folds the paper.",
        "I watch the news every evening.",
    ))),
)

CHINESE_SENSES = (
    _senses("zh", "行", ("háng", (
        "他在一家银行工作。",
        "这一行字写得很整齐。",
        "她在这个行业里干了二十年。",
        "请把名字写在第一行。",
        "我们排成两行站好。",
        "他是我们这一行的老师傅。",
    )), ("xíng", (
        "这样做不行，我们再想想。",
        "我们步行去学校。",
        "你明天来，行吗？",
        "出门旅行前要检查护照。",
        "他的病好了，已经能自己行走。",
        "这个办法行得通。",
    ))),
    _senses("zh", "打", ("hit", (
        "他生气地打了桌子一下。",
        "孩子们不应该打架。",
        "雨点打在窗户上。",
        "他不小心打碎了杯子。",
        "妈妈轻轻打了一下他的手。",
        "拳击手一拳打中了对手。",
    )), ("do", (
        "晚上给我打个电话。",
        "我们周末去打篮球。",
        "她每天早上打太极拳。",
        "请帮我打一份文件。",
        "他在超市打工。",
        "出门前记得打伞。",
    ))),
    _senses("zh", "花", ("flower", (
        "院子里的花开了。",
        "她送给妈妈一束花。",
        "这朵花是红色的。",
        "春天公园里到处都是花。",
        "蜜蜂在花上采蜜。",
        "他每天给花浇水。",
    )), ("spend", (
        "买这本书花了五十块钱。",
        "我花了三个小时写作业。",
        "别把钱都花光了。",
        "修车要花不少时间。",
        "她花很多心思准备晚饭。",
        "这次旅行花的钱比预计多。",
    ))),
    _senses("zh", "意思", ("meaning", (
        "这个词是什么意思？",
        "我没明白你的意思。",
        "这句话的意思很清楚。",
        "老师解释了成语的意思。",
        "他的意思是明天再说。",
        "字典里写着这个字的意思。",
    )), ("fun or token", (
        "这部电影很有意思。",
        "一点小意思，请收下。",
        "这个游戏没什么意思。",
        "跟他聊天特别有意思。",
        "这是我的一点意思，别客气。",
        "这本书越看越有意思。",
    ))),
    _senses("zh", "东西", ("thing", (
        "我去超市买点东西。",
        "你的东西放在桌子上了。",
        "他把东西都装进了箱子。",
        "这个东西怎么用？",
        "别忘了带上你的东西。",
        "桌上的东西太多了。",
    )), ("east-west", (
        "这条街东西走向。",
        "这个城市东西长二十公里。",
        "长江从西向东，横贯东西。",
        "广场东西两侧各有一座塔。",
        "这座桥连接着东西两岸。",
        "房子东西宽十米，南北长十五米。",
    ))),
    _senses("zh", "长", ("cháng", (
        "这条河很长。",
        "她的头发又黑又长。",
        "这座桥长五百米。",
        "冬天的夜晚特别长。",
        "这条裙子太长了。",
        "会议开了很长时间。",
    )), ("zhǎng", (
        "孩子长得真快。",
        "树上长出了新叶子。",
        "他是我们班的班长。",
        "她长大以后想当医生。",
        "院子里长满了草。",
        "他的脸上长了一颗痘。",
    ))),
    _senses("zh", "还", ("hái", (
        "他还在睡觉。",
        "我还没吃午饭。",
        "外面还下着雨。",
        "你还记得那天吗？",
        "时间还早，不用着急。",
        "她还想再学一门外语。",
    )), ("huán", (
        "请把书还给图书馆。",
        "我明天还你钱。",
        "借的东西要按时还。",
        "他把自行车还给了朋友。",
        "这本杂志看完记得还我。",
        "银行要求他每月还贷款。",
    ))),
    _senses("zh", "会", ("can", (
        "她会说三种语言。",
        "我不会游泳。",
        "明天会下雨吗？",
        "他会弹钢琴。",
        "小狗会自己开门。",
        "你会做这道菜吗？",
    )), ("meeting", (
        "下午三点开会。",
        "这次会有两百人参加。",
        "他在会上发了言。",
        "运动会下周举行。",
        "晚会八点开始。",
        "校长主持了今天的会。",
    ))),
    _senses("zh", "米", ("rice", (
        "今年的米价涨了。",
        "她淘好米开始煮饭。",
        "这袋米有十公斤。",
        "南方人喜欢吃米饭。",
        "米放久了会生虫。",
        "农民在田里种米。",
    )), ("metre", (
        "他跑完了一百米。",
        "这座楼高五十米。",
        "河宽大约三十米。",
        "游泳池长二十五米。",
        "离车站还有两百米。",
        "这块布长三米。",
    ))),
    _senses("zh", "重", ("zhòng", (
        "这个箱子很重。",
        "他的病很重，需要住院。",
        "这件事对我很重要。",
        "行李太重了，我搬不动。",
        "她说话的口气很重。",
        "铁比木头重。",
    )), ("chóng", (
        "请把这句话重说一遍。",
        "这篇作文要重写。",
        "我们重新开始吧。",
        "电脑出错了，只好重来。",
        "老朋友多年后重逢。",
        "这首歌值得重听。",
    ))),
)

ENGLISH_GENERAL = _plain("en", """
Photosynthesis turns sunlight, water and carbon dioxide into sugar.
The volcano erupted after weeks of small earthquakes.
My grandmother bakes bread every Sunday morning.
Add a pinch of salt and stir the soup slowly.
The train to Berlin was delayed by forty minutes.
Pilots check the weather before every flight.
The museum keeps paintings from the seventeenth century.
She practised the violin for two hours after school.
The parliament voted on the new tax law yesterday.
Cats sleep for most of the day and hunt at night.
The doctor said the fever would pass in a few days.
Compile the program again after fixing the syntax error.
A prime number has exactly two divisors.
The glacier has shrunk a great deal over the last fifty years.
They planted tomatoes, beans and sunflowers in the garden.
The referee blew the whistle and the crowd went quiet.
Heavy rain flooded the streets of the small town.
The library closes early on public holidays.
He forgot his umbrella on the bus again.
The students wrote an essay about the industrial revolution.
A river runs through the middle of the city.
The nurse measured his blood pressure.
Our neighbours painted their fence blue.
The bridge was built more than a hundred years ago.
She poured milk into her coffee.
The teacher explained how fractions work.
Wolves live and hunt in packs.
The spacecraft landed safely on the moon.
I usually walk to work when the weather is nice.
The company announced record profits this year.
A strong wind knocked down the old tree.
He fixed the leaking tap in the bathroom.
The orchestra tuned their instruments before the concert.
Lemons are sour and oranges are sweet.
The baby finally fell asleep after midnight.
The judge read the verdict aloud.
They camped beside a quiet lake in the mountains.
My brother studies chemistry at university.
The price of petrol went up again.
The farmer milks the cows at dawn.
She sent the parcel by express post.
The shop sells fresh fish every morning.
An eagle circled high above the valley.
The kettle boiled and switched itself off.
We painted the walls of the kitchen yellow.
The nurse gave the child a sticker.
He repaired the engine of his motorbike.
A thick fog covered the harbour.
The election results were announced at midnight.
The recipe calls for three eggs and a cup of sugar.
Snow fell all night and covered the cars.
The baker sold out of croissants before nine.
Our flight was cancelled because of the strike.
The architect drew plans for a new school.
The children built a sandcastle on the beach.
She speaks French, Spanish and a little Japanese.
The bus stops right outside our house.
The hospital opened a new children's ward.
He wrote a letter to his old teacher.
The moon looked enormous over the hills.
The scientists published their results in a journal.
A cold wind blew from the north.
The printer ran out of ink.
We ordered pizza and watched a documentary.
The soldiers marched across the square.
Tigers are the largest cats in the world.
The carpenter made a table from oak.
The new road will reduce traffic in the centre.
My phone battery lasts about a day.
The tourists took photos of the cathedral.
Fresh bread smells wonderful.
The mayor opened the new swimming pool.
The volcano is still active today.
He spilled tea all over his notes.
The garden was full of butterflies.
The lecture was about ancient Egypt.
She knitted a scarf for her niece.
The storm knocked out power across the region.
The chef sharpened his knives.
Most deserts get very little rain.
The museum guide told us about the dinosaurs.
The pupils lined up in the playground.
A good night's sleep helps you concentrate.
The ferry crosses the strait twice a day.
He lent me his umbrella.
The horse jumped over the fence.
She found an old photograph in the attic.
The bakery on our street makes great cakes.
They moved to a bigger flat last year.
The nurse works in the emergency department.
The hikers reached the summit at noon.
The tailor shortened my trousers.
A cloud of dust rose behind the truck.
The company hired twenty new engineers.
My sister collects stamps from all over the world.
The ice on the pond was too thin to walk on.
He sang a lullaby to his daughter.
The sun sets later in summer.
The parrot can repeat a few words.
We missed the last train home.
The kitchen smelled of garlic and onions.
The athletes trained for the marathon.
The computer restarted to install updates.
The waiter brought us the menu.
Her grandfather was a fisherman.
The meeting was postponed until Thursday.
The children painted pictures of their families.
The lighthouse warned ships about the rocks.
A swarm of bees settled on the branch.
The firefighters rescued a cat from the roof.
She is learning to drive.
The castle stands on a hill above the town.
The radio played an old song.
The cake needs another ten minutes in the oven.
We counted the stars on a clear night.
The farmer harvested the wheat in August.
The dentist said I should floss more.
The streets were quiet on Sunday morning.
The pilot announced that we would land soon.
His handwriting is hard to read.
The students took notes during the lecture.
A rainbow appeared after the storm.
The mechanic changed the oil in my car.
She wore a red coat and black boots.
The owl hooted in the forest.
The cinema was almost empty.
He planted an apple tree in the yard.
The town holds a market every Saturday.
We walked along the coast for hours.
The team celebrated their victory.
The doctor prescribed antibiotics.
The cat knocked a glass off the table.
The students visited a science museum.
The soup was too salty to eat.
The lawyer read the contract carefully.
The winter was long and dark.
He cycled to the village and back.
The laptop screen cracked when it fell.
Grandpa told us stories about the war.
The painter mixed blue and yellow to make green.
The city built a new tram line.
They sailed across the bay.
The chef tasted the sauce and added pepper.
She solved the puzzle in ten minutes.
The dog chased its tail in circles.
The students planted trees around the school.
The hotel room had a view of the sea.
The tickets sold out in an hour.
The farmer fed the chickens.
Our class went on a trip to the zoo.
The lamp on the desk was broken.
He ate a sandwich on the park bench.
The wind turned the pages of my book.
The river froze during the cold winter.
The post office opens at nine.
She finished the race in second place.
The child drew a house with a red roof.
The council repaired the potholes on our road.
Thunder rolled across the sky.
The sailor tied a strong knot.
""")

CHINESE_GENERAL = _plain("zh", """
今天天气很好，我们去公园散步吧。
我每天早上七点起床。
妈妈在厨房做饭。
这本书我已经看完了。
他坐公交车去上班。
周末我们一起去爬山。
学生们在教室里认真听课。
她喜欢喝绿茶。
这家饭店的菜很好吃。
昨天晚上下了一场大雨。
我的手机没电了。
小猫在沙发上睡觉。
明天是我的生日。
他们正在讨论新的计划。
图书馆里非常安静。
我想学习弹吉他。
火车晚点了半个小时。
这个城市有很多高楼。
孩子们在操场上踢足球。
医生让他多喝水，多休息。
她每天坚持跑步。
这条路晚上很黑。
我们班有四十个学生。
爷爷喜欢在公园里下棋。
冬天的北京很冷。
他把窗户打开了。
这道数学题太难了。
超市里的人很多。
我们坐飞机去上海。
她在画一幅山水画。
夏天的西瓜特别甜。
老师布置了很多作业。
小鸟在树上唱歌。
这个周末我要去看电影。
他的中文说得很好。
厨房里有一股香味。
我们在湖边野餐。
她把房间打扫得很干净。
天黑了，路灯亮了起来。
这件衣服的颜色很漂亮。
弟弟在写作业。
我们学校有一个很大的图书馆。
他骑自行车去学校。
今天的新闻很重要。
月亮又大又圆。
小狗跑得很快。
她给朋友写了一封信。
这座山很高。
我喜欢听古典音乐。
他每天晚上看一个小时的书。
公园里有很多人在跳舞。
外面刮起了大风。
这家商店九点开门。
她在大学里学习化学。
我们一起包饺子吧。
天空中飘着白云。
他把钥匙忘在家里了。
这个博物馆有很多古代文物。
孩子们在河边玩水。
明天早上八点考试。
她戴着一顶红帽子。
农民在田里收割小麦。
这座城市的交通很方便。
我想喝一杯热咖啡。
他们在海边看日出。
老人在门口晒太阳。
我的电脑坏了。
他们家住在十楼。
这个苹果又红又大。
她是一名护士。
我们的火车下午两点出发。
春节的时候家家户户都很热闹。
他在学习开车。
这场比赛非常精彩。
窗外下起了雪。
她每天坐地铁上班。
这只猫是白色的。
我们明天去动物园。
他在厨房洗碗。
这个问题很简单。
学校门口有一家书店。
他给妹妹买了一个玩具。
今天的作业不多。
爸爸在看报纸。
她唱歌唱得很好听。
我们在山顶上看风景。
天气预报说明天有雨。
这家医院很大。
他们在讨论环境保护的问题。
我最喜欢的季节是秋天。
小朋友们在画画。
这个村子很安静。
他把垃圾扔进了垃圾桶。
她第一次坐飞机。
桌子上放着一盆水果。
我们一起去唱歌吧。
大熊猫喜欢吃竹子。
他在网上买了一双鞋。
这条河里有很多鱼。
她每天早上喝一杯牛奶。
他们在公园里放风筝。
老师表扬了我们班。
火车站离这儿不远。
她的房间里有很多书。
这座桥是去年建成的。
我们在饭店吃了一顿饭。
他每个周末都去游泳。
冬天的早晨有很多雾。
她把照片挂在墙上。
爷爷年轻的时候是工人。
这个菜有点辣。
学生们在实验室做实验。
我们在车站等朋友。
她养了一条金鱼。
这台电视是新买的。
他们在讨论明天的安排。
今天的风很大。
孩子们在看动画片。
她在厨房切菜。
这个公园的环境很好。
我们一起去散步吧。
他的房间很乱。
夜里的星星很亮。
她喜欢在阳台上看书。
这家咖啡馆很有名。
他们一家人去海边度假。
春天来了，天气暖和了。
他考试得了第一名。
这个城市的夜景很美。
我的朋友住在北京。
小狗在院子里跑来跑去。
今天的晚饭是面条。
他在办公室加班。
她正在准备考试。
这条街上有很多小吃。
他们在山上种了很多树。
我们在教室里上课。
她给花园里的草浇水。
这次比赛我们赢了。
电影院里坐满了人。
他每天早上读英语。
我们坐船过河。
天气越来越冷了。
她把信寄出去了。
他们在操场上跑步。
这座塔有一千多年的历史。
我把书放在书包里。
孩子们在雪地里堆雪人。
她在医院照顾病人。
这家店的面包很新鲜。
他们周末去乡下看奶奶。
我听说他搬家了。
这位作家写了很多小说。
大家都在认真工作。
她把门关上了。
""")

NEIGHBOUR_CORPUS: tuple[CorpusRecord, ...] = (
    *(r for group in ENGLISH_SENSES for r in group),
    *ENGLISH_GENERAL,
    *(r for group in CHINESE_SENSES for r in group),
    *CHINESE_GENERAL,
)
